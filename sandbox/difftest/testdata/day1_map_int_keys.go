// args: {"n": 3}
// want: {"1": "x", "2": "xx", "3": "xxx"}
package artifact

import "strings"

func Build(n int) map[int]string {
	m := map[int]string{}
	for i := 1; i <= n; i++ {
		m[i] = strings.Repeat("x", i)
	}
	return m
}
