// args: ["ab"]
// kind: compile
// contains: method expression (*strings.Builder).String used as a value
// stage: compile
// backends: yaegi
package artifact

// A method expression of a package's pointer type as a value: yaegi v0.16.1 panics when it is
// called ("reflect: Method index out of range"). Refused with a hint on yaegi; wasm answers "ab".

import "strings"

func Echo(s string) string {
	var b strings.Builder
	b.WriteString(s)
	f := (*strings.Builder).String
	return f(&b)
}
