// args: [[1.5, 2.5]]
// want: 4
package artifact

type number interface {
	~int | ~int64 | ~float64
}

func sum[T number](xs []T) T {
	var s T
	for _, x := range xs {
		s += x
	}
	return s
}

func Total(xs []float64) float64 { return sum(xs) }
