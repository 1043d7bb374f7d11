// args: []
// kind: policy
package artifact

import "sync"

func Lock() int {
	var m sync.Mutex
	m.Lock()
	m.Lock()
	return 1
}
