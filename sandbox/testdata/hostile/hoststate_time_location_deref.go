// args: []
// kind: policy
// contains: shared with the host
// backends: yaegi
package artifact

import "time"

// Shift overwrites the Location a UTC time reports: the host's own UTC location, reached through
// a method rather than the time.UTC variable (compiled Go would change the program's own). The
// write is stopped, and the call fails as a policy violation although the code recovers.
func Shift() string {
	func() {
		defer func() { recover() }()
		loc := time.Unix(0, 0).UTC().Location()
		*loc = *time.FixedZone("EVIL", 3600)
	}()
	return time.Date(2020, 1, 2, 3, 4, 5, 0, time.Unix(0, 0).UTC().Location()).Format(time.RFC3339)
}
