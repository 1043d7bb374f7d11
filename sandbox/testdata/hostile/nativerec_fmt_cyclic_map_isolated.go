// args: []
// isolation: process
// backends: yaegi
// timeout: 5s
// kind: depth|memory|panic|deadline
package artifact

import "fmt"

// Show formats a map that contains itself: fmt recurses natively forever, no guest frame in
// between (in-process yaegi cannot contain it; see nativerec_fmt_cyclic_value_isolated). It
// allocates as it goes: the worker runs out of memory, or out of time on a loaded machine.
func Show() string {
	m := map[string]any{}
	m["self"] = m
	return fmt.Sprint(m)
}
