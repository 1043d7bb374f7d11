// args: [[4, -2, 9]]
// want: [-2, 9, 0]
package artifact

func Bounds(xs []int) []int {
	lo, hi := xs[0], xs[0]
	for _, x := range xs {
		lo = min(lo, x)
		hi = max(x, hi)
	}
	return []int{lo, hi, max(0, min(lo, hi, -1)+1)}
}
