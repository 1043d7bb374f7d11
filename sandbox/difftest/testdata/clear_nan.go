// want: 0
package artifact

import "math"

func Clear() int {
	m := map[float64]int{1: 1, math.NaN(): 2}
	clear(m)
	return len(m)
}
