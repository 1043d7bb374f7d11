// args: [-1]
// kind: returned
// contains: negative
package artifact

import "errors"

func Sqrt(x float64) (float64, error) {
	if x < 0 {
		return 0, errors.New("negative input")
	}
	return x, nil
}
