// args: [[1, 2, 3]]
// want: [3, 2, 1]
package artifact

type stack[T any] struct{ items []T }

func (s *stack[T]) push(v T) { s.items = append(s.items, v) }
func (s *stack[T]) pop() (T, bool) {
	var zero T
	if len(s.items) == 0 {
		return zero, false
	}
	v := s.items[len(s.items)-1]
	s.items = s.items[:len(s.items)-1]
	return v, true
}

func Reverse(xs []int) []int {
	var s stack[int]
	for _, x := range xs {
		s.push(x)
	}
	out := []int{}
	for {
		v, ok := s.pop()
		if !ok {
			return out
		}
		out = append(out, v)
	}
}
