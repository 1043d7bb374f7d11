// args: [[3, 1, 2]]
// want: [1, 2, 3]
package artifact

import "sort"

func Sorted(xs []int) []int {
	sort.Ints(xs)
	return xs
}
