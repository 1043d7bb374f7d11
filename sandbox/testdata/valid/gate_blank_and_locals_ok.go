// args: [[3, 9, 4]]
// want: 9
package artifact

import (
	_ "strings"
)

var _ = 1

// Max shadows the predeclared max and len locally, which changes nothing outside the function.
func Max(xs []int) int {
	max, len := 0, 0
	for _, x := range xs {
		len++
		if x > max {
			max = x
		}
	}
	_ = len
	return max
}
