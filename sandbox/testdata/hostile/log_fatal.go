// args: []
// kind: policy
package artifact

import "log"

func Die() int {
	log.Fatal("bye")
	return 0
}
