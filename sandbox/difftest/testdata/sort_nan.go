// want: ["NaN", "1", "3"]
package artifact

import (
	"math"
	"slices"
	"strconv"
)

func SortNaN() []string {
	s := []float64{3, math.NaN(), 1}
	slices.Sort(s)
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = strconv.FormatFloat(v, 'g', -1, 64)
	}
	return out
}
