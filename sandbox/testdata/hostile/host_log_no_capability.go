// args: []
// kind: policy
package artifact

import "forge/host"

func Say() int {
	host.Log("hello")
	return 1
}
