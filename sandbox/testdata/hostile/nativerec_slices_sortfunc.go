// args: [[3, 1, 2]]
// timeout: 5s
// kind: depth
package artifact

import "slices"

// Sort's comparison sorts again through slices.SortFunc.
func Sort(xs []int) []int {
	var cmp func(a, b int) int
	cmp = func(a, b int) int {
		slices.SortFunc(xs, cmp)
		return a - b
	}
	slices.SortFunc(xs, cmp)
	return xs
}
