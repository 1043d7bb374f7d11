// args: []
// backends: wasm
// timeout: 5s
// kind: depth|memory|panic
package artifact

import "fmt"

// Show formats a slice that contains itself (see nativerec_fmt_cyclic_value_isolated): the wasm
// guest's own stack cap stops it (a depth error).
func Show() string {
	x := []any{nil}
	x[0] = x
	return fmt.Sprint(x)
}
