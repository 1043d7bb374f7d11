// args: {"m": {"a": 1, "b": 2, "é": 3}}
// want: 6
package artifact

func Sum(m map[string]int) int {
	t := 0
	for _, v := range m {
		t += v
	}
	return t
}
