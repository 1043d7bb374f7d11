// args: [["a:1", "b:2", "a:3"]]
// want: {"a": [1, 3], "b": [2]}
package artifact

import (
	"strconv"
	"strings"
)

func Group(pairs []string) (map[string][]int, error) {
	m := map[string][]int{}
	for _, p := range pairs {
		k, v, _ := strings.Cut(p, ":")
		n, err := strconv.Atoi(v)
		if err != nil {
			return nil, err
		}
		m[k] = append(m[k], n)
	}
	return m, nil
}
