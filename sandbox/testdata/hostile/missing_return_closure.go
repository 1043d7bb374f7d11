// args: [[3, 1, 2]]
// kind: compile
// stage: compile
// contains: missing return
package artifact

import "sort"

// SortDesc's less function can end without a return.
func SortDesc(xs []int) []int {
	sort.Slice(xs, func(i, j int) bool {
		if xs[i] > xs[j] {
			return true
		}
	})
	return xs
}
