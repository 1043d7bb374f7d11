// args: []
// timeout: 200ms
// kind: policy
package artifact

import "time"

func Slow() int {
	time.Sleep(10 * time.Second)
	return 1
}
