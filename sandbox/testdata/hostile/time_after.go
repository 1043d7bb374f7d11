// args: []
// kind: policy
package artifact

import "time"

func Wait() int {
	<-time.After(time.Hour)
	return 1
}
