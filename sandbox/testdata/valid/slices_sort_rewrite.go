// args: [[5, 3, 9, 1]]
// want: [1, 3, 5, 9]
package artifact

import "slices"

func Sorted(xs []int) []int {
	slices.Sort(xs)
	return xs
}
