// args: []
// caps: {"log": true}
// timeout: 300ms
// kind: deadline
package artifact

import "forge/host"

// Flood logs empty lines until its deadline (2.6 M lines in 10 s when empty lines were free):
// each line now costs a byte of the output cap and a call keeps at most sandbox.MaxLogLines.
// The run ends as the code's own deadline, not as a host call in flight.
func Flood() int {
	for {
		host.Log("")
	}
}
