// args: [2.5]
// want: 1
package artifact

func Clamp(x float64) float64 { return min(1, x) }
