// args: [5]
// want: 120
package artifact

import "errors"

// Recursive, so depth-guarded: the guard rewrites returns with untyped nil results.
func Fact(n int) (int, error) {
	if n < 0 {
		return 0, errors.New("negative")
	}
	if n == 0 {
		return 1, nil
	}
	r, err := Fact(n - 1)
	return n * r, err
}
