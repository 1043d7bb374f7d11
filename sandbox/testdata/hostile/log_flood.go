// args: []
// caps: {"log": true}
// output: 4096
// timeout: 300ms
// kind: deadline
package artifact

import "forge/host"

// Logs are capped at the output cap; the flood itself ends at the deadline.
func Flood() int {
	for i := 0; ; i++ {
		host.Logf("line %d of a very long log flood", i)
	}
}
