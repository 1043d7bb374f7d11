// args: [[3, 1, 2, 5, 4]]
// want: [1, 2, 3, 4, 5]
package artifact

// The loop body assigns i and a closure has an i of its own: not the capture gap_loopvar_assigned
// refuses (the refusal goes by the type check's objects, not names).

import "sort"

func Sorted(xs []int) []int {
	out := append([]int(nil), xs...)
	for i := 0; i < 1; i++ {
		sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
		i++
	}
	return out
}
