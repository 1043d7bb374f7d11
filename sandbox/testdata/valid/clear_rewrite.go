// args: [{"a": 1}]
// want: 0
package artifact

func Cleared(m map[string]int) int {
	clear(m)
	return len(m)
}
