// args: [5, 16]
// want: 4
package artifact

import "math"

func Min(a, b float64) float64 { return min(a, math.Sqrt(b)) }
