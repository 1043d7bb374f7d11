// args: [[5, -2, 0, 7]]
// want: [1, -1, 0, 1, 3, 7, "odd"]
package artifact

// Classify exercises every terminating statement of the Go spec that the gate must accept.
func Classify(xs []int) []any {
	out := []any{}
	for _, x := range xs {
		out = append(out, sign(x))
	}
	return append(out, find(xs, 7), last(xs), parity(xs[0]))
}

func sign(n int) int {
	if n > 0 {
		return 1
	} else if n < 0 {
		return -1
	} else {
		return 0
	}
}

func find(xs []int, x int) int {
	i := 0
outer:
	for {
		for j := range xs {
			if xs[j] == x {
				i = j
				break outer
			}
		}
		panic("not found")
	}
	return i
}

func last(xs []int) int {
	for i := 0; ; i++ {
		if i == len(xs)-1 {
			return xs[i]
		}
	}
}

func parity(n int) string {
	switch {
	case n%2 == 0:
		return "even"
	default:
		if n < 0 {
			panic("negative")
		}
		return "odd"
	}
}
