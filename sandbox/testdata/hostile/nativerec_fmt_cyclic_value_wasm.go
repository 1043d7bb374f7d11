// args: []
// backends: wasm
// timeout: 5s
// kind: memory|panic
package artifact

import "fmt"

// Show formats a slice that contains itself (see nativerec_fmt_cyclic_value_isolated).
func Show() string {
	x := []any{nil}
	x[0] = x
	return fmt.Sprint(x)
}
