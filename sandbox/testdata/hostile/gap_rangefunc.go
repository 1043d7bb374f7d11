// args: [4]
// kind: compile
// contains: range over the function upTo(n)
// stage: compile
// backends: yaegi
package artifact

// Range over a function iterator (Go 1.23): yaegi v0.16.1 panics ("nil type"). Refused with a
// hint on yaegi; wasm answers 6.

func upTo(n int) func(yield func(int) bool) {
	return func(yield func(int) bool) {
		for i := 0; i < n; i++ {
			if !yield(i) {
				return
			}
		}
	}
}

func Sum(n int) int {
	s := 0
	for v := range upTo(n) {
		s += v
	}
	return s
}
