// args: []
// kind: policy
// contains: shared with the host
// backends: yaegi
package artifact

import "time"

// Shift writes the host's UTC location through a pointer expression written over two lines (the
// check skipped any pointer text containing a newline).
func Shift() string {
	*(time.Unix(0, 0).
		UTC().Location()) = *time.FixedZone("EVIL", 3600)
	return time.Date(2020, 1, 2, 3, 4, 5, 0, time.Unix(0, 0).UTC().Location()).Format(time.RFC3339)
}
