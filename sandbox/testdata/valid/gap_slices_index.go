// args: [[4, 5, 6]]
// want: [1, true]
package artifact

import "slices"

func Find(xs []int) []any {
	return []any{slices.Index(xs, 5), slices.Contains(xs, 6)}
}
