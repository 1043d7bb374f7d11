// args: [["a", "b"]]
// kind: compile
// contains: range over the function pairs(xs)
// stage: compile
// backends: yaegi
package artifact

// Range over a two-value function iterator: as gap_rangefunc. Refused on yaegi; wasm answers "0a1b".

import "strconv"

func pairs(xs []string) func(yield func(int, string) bool) {
	return func(yield func(int, string) bool) {
		for i, x := range xs {
			if !yield(i, x) {
				return
			}
		}
	}
}

func Join(xs []string) string {
	s := ""
	for i, x := range pairs(xs) {
		s += strconv.Itoa(i) + x
	}
	return s
}
