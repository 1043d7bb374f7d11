// args: []
// kind: policy
// contains: shared with the host
// backends: yaegi
package artifact

import "time"

// Shift writes the host's UTC location as a select case's receive assignment.
func Shift() string {
	loc := time.Unix(0, 0).UTC().Location()
	ch := make(chan time.Location, 1)
	ch <- *time.FixedZone("EVIL", 3600)
	select {
	case *loc = <-ch:
	}
	return time.Date(2020, 1, 2, 3, 4, 5, 0, time.Unix(0, 0).UTC().Location()).Format(time.RFC3339)
}
