// args: []
// timeout: 5s
// kind: panic
// contains: more bytes cut]
package artifact

import "strings"

// Flood panics with a 40 MiB value: the panic text the host keeps is capped like an error's.
func Flood() int {
	panic(strings.Repeat("flood ", 40<<20/6))
}
