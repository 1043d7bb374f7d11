// args: []
// kind: policy
// contains: shared with the host
// backends: yaegi
package artifact

import "time"

// Shift writes the host's UTC location in an if statement's init: the write check must see
// header statements too, not only the statements of blocks.
func Shift() string {
	loc := time.Unix(0, 0).UTC().Location()
	if *loc = *time.FixedZone("EVIL", 3600); true {
	}
	return time.Date(2020, 1, 2, 3, 4, 5, 0, time.Unix(0, 0).UTC().Location()).Format(time.RFC3339)
}
