// args: []
// kind: policy
package artifact

import "os"

func Quit() int {
	os.Exit(3)
	return 0
}
