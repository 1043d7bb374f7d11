// args: [[3, 1, 2]]
// want: 3
package artifact

import "cmp"

func maxOf[T cmp.Ordered](xs []T) T {
	m := xs[0]
	for _, x := range xs {
		if x > m {
			m = x
		}
	}
	return m
}

func Largest(xs []int) int { return maxOf(xs) }
