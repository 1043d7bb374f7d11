// args: [5]
// want: null
package artifact

import "errors"

func Check(x int) error {
	if x < 0 {
		return errors.New("negative")
	}
	return nil
}
