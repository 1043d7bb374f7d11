// args: [[1, 2, 3], 2]
// want: true
package artifact

import "slices"

func Has(xs []int, x int) bool { return slices.Contains(xs, x) }
