// args: []
// kind: policy
// contains: shared with the host
// backends: yaegi
package artifact

import "time"

// Shift writes the host's UTC location from a deferred closure, after the result is computed.
func Shift() (s string) {
	loc := time.Unix(0, 0).UTC().Location()
	defer func() { *loc = *time.FixedZone("EVIL", 3600) }()
	return "x"
}
