// args: [4]
// want: 6
package artifact

func Triangle(n int) int {
	s := 0
	for i := range n {
		s += i
	}
	for range 2 {
		s += 0
	}
	return s
}
