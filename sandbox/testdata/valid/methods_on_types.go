// args: [[1, 2, 3]]
// want: 2
package artifact

type stack struct{ items []int }

func (s *stack) push(x int) { s.items = append(s.items, x) }
func (s *stack) pop() int {
	x := s.items[len(s.items)-1]
	s.items = s.items[:len(s.items)-1]
	return x
}

func SecondLast(xs []int) int {
	s := &stack{}
	for _, x := range xs {
		s.push(x)
	}
	s.pop()
	return s.pop()
}
