// args: ["a1B2 c!"]
// want: 3
package artifact

import "unicode"

func Letters(s string) int {
	n := 0
	for _, r := range s {
		if unicode.IsLetter(r) {
			n++
		}
	}
	return n
}
