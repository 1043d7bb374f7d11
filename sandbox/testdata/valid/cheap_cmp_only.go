// args: [3, 5]
// want: [-1, 1]
package artifact

import "cmp"

// Order imports cmp alone: the yaegi backend compiles only the generic cmp source into its
// interpreter, not slices or maps.
func Order(a, b int) []int {
	less := 0
	if cmp.Less(a, b) {
		less = 1
	}
	return []int{cmp.Compare(a, b), less}
}
