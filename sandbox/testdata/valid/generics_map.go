// args: [[1, 2, 3]]
// want: ["1", "2", "3"]
package artifact

import "strconv"

func mapSlice[T, U any](xs []T, f func(T) U) []U {
	out := make([]U, 0, len(xs))
	for _, x := range xs {
		out = append(out, f(x))
	}
	return out
}

// yaegi v0.16.1 cannot infer U from a function argument: instantiate explicitly.
func Strs(xs []int) []string { return mapSlice[int, string](xs, strconv.Itoa) }
