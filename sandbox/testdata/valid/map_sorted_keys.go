// args: [{"b": 1, "a": 2, "c": 3}]
// want: ["a", "b", "c"]
package artifact

import "sort"

func Keys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
