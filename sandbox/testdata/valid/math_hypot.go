// args: [3, 4]
// want: 5
package artifact

import "math"

func Hyp(a, b float64) float64 { return math.Sqrt(a*a + b*b) }
