// args: [[1, 2, 3]]
// want: ["1", "2", "3"]
package artifact

import "strconv"

func mapTo[T, U any](xs []T, f func(T) U) []U {
	out := make([]U, 0, len(xs))
	for _, x := range xs {
		out = append(out, f(x))
	}
	return out
}

func Strings(xs []int) []string {
	return mapTo[int, string](xs, strconv.Itoa)
}
