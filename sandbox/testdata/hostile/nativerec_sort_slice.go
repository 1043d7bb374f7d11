// args: [[3, 1, 2]]
// timeout: 5s
// kind: depth
package artifact

import "sort"

// Sort's comparison sorts again, forever.
func Sort(xs []int) []int {
	var less func(i, j int) bool
	less = func(i, j int) bool {
		sort.Slice(xs, less)
		return xs[i] < xs[j]
	}
	sort.Slice(xs, less)
	return xs
}
