// args: ["abc"]
// isolation: process
// timeout: 5s
// kind: depth|memory
// backends: yaegi
package artifact

import "strings"

func shout(r rune) rune {
	strings.Map(shout, "x")
	return r
}

// strings.Map calls back into interpreted code from native code: the recursion never meets the
// depth guard and ends in the runtime's fatal stack overflow, which kills only the worker.
func Shout(s string) string { return strings.Map(shout, s) }
