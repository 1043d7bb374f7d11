// args: [[3, 1, 2]]
// timeout: 5s
// kind: depth|memory
package artifact

import "slices"

// Sort's comparison sorts again through slices.SortFunc. Either stop is the code's: the depth guard, or
// (isolated, under the race detector, whose generic frames are heavier) the memory cap first.
func Sort(xs []int) []int {
	var cmp func(a, b int) int
	cmp = func(a, b int) int {
		slices.SortFunc(xs, cmp)
		return a - b
	}
	slices.SortFunc(xs, cmp)
	return xs
}
