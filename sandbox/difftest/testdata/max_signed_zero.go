// want: [true, false, "NaN", "NaN", true, false]
package artifact

import (
	"math"
	"slices"
	"strconv"
)

// Zeros keeps -0 inside one function: the interpreter loses the sign of a -0 passed as an
// argument to a function of the file (a gap of its own, see RATIONALE).
func Zeros() []any {
	var z, n, nan float64 = 0, math.Copysign(0, -1), math.NaN()
	lo, hi := min(z, n), max(n, z)
	s := []float64{z, n}
	return []any{math.Signbit(lo), math.Signbit(hi), strconv.FormatFloat(min(1, nan, 0), 'g', -1, 64),
		strconv.FormatFloat(max(nan, 2), 'g', -1, 64), math.Signbit(slices.Min(s)), math.Signbit(slices.Max(s))}
}
