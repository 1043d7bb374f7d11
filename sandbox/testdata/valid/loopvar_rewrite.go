// args: [3]
// want: [0, 1, 2]
package artifact

func Captured(n int) []int {
	var fs []func() int
	for i := 0; i < n; i++ {
		fs = append(fs, func() int { return i })
	}
	out := []int{}
	for _, f := range fs {
		out = append(out, f())
	}
	return out
}
