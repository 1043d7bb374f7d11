// args: []
// isolation: process
// backends: yaegi
// timeout: 5s
// kind: depth|memory|panic
package artifact

import "fmt"

// Show formats a slice that contains itself: fmt recurses natively with no guest frame in
// between, so no depth guard can count it. In-process yaegi cannot contain this one (the Go
// runtime's "stack overflow" is fatal to the process): only an isolated worker or wasm can.
func Show() string {
	x := []any{nil}
	x[0] = x
	return fmt.Sprint(x)
}
