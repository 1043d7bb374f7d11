// args: [5]
// want: 15
package artifact

func Sum(n int) int {
	s, i := 0, 1
again:
	if i <= n {
		s += i
		i++
		goto again
	}
	return s
}
