// args: ["abc"]
// timeout: 5s
// kind: depth
package artifact

import "strings"

// Upper re-enters itself through strings.Map: the literal calls nothing guest-side itself, so
// before issue 8 it had no depth guard and the host died of a stack overflow.
func Upper(s string) string {
	var f func(r rune) rune
	f = func(r rune) rune {
		strings.Map(f, "x")
		return r
	}
	return strings.Map(f, s)
}
