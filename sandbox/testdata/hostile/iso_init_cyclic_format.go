// args: []
// isolation: process
// memory: 64MB
// timeout: 5s
// kind: depth|memory
// stage: compile
// backends: yaegi
package artifact

import "fmt"

var s = []any{nil}

// Formatting a slice that contains itself recurses in fmt (native code, no depth guard) until
// the goroutine stack or the memory cap gives out: in the worker, never in the host.
func init() {
	s[0] = s
	_ = fmt.Sprint(s)
}

func F() int { return len(s) }
