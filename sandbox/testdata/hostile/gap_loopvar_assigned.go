// args: [6]
// kind: compile
// contains: captures the loop variable i, which the loop body also assigns
// stage: compile
// backends: yaegi
package artifact

// A closure captures a three-clause loop variable the body also assigns: Go 1.22 gives each
// iteration its own i ([1, 3, 5]); yaegi v0.16.1 shares one ([6, 6, 6]) and the per-iteration copy
// cannot be made (the body's assignment must reach the post statement). Refused on yaegi; wasm
// answers [1, 3, 5].

func Odd(n int) []int {
	var fs []func() int
	for i := 0; i < n; i++ {
		fs = append(fs, func() int { return i })
		i++
	}
	out := []int{}
	for _, f := range fs {
		out = append(out, f())
	}
	return out
}
