// args: []
// kind: panic
package artifact

func Huge() int {
	s := make([]int, 1<<62)
	return len(s)
}
