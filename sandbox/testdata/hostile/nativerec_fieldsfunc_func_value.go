// args: ["a b"]
// timeout: 5s
// kind: depth
package artifact

import "strings"

var input = "a b"

func isSep(r rune) bool {
	strings.FieldsFunc(input, isSep)
	return r == ' '
}

// Split hands a top-level function to strings.FieldsFunc, which calls it back, which calls
// strings.FieldsFunc again.
func Split(s string) []string { return strings.FieldsFunc(s, isSep) }
