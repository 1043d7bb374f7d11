// args: ["abc"]
// timeout: 5s
// kind: depth
package artifact

import "strings"

type mapper struct{ s string }

func (m mapper) rot(r rune) rune {
	strings.Map(m.rot, m.s)
	return r + 1
}

// Rot hands a method value to strings.Map, which calls it back, which calls strings.Map again.
func Rot(s string) string { return strings.Map(mapper{s}.rot, s) }
