// args: ["a b a c a"]
// want: {"a": 3, "b": 1, "c": 1}
package artifact

import "strings"

func WordCount(s string) map[string]int {
	m := map[string]int{}
	for _, w := range strings.Fields(s) {
		m[w]++
	}
	return m
}
