// args: []
// kind: policy
// contains: shared with the host
// backends: yaegi
package artifact

import "time"

// Shift writes the host's UTC location in the init of an else-if.
func Shift() string {
	loc := time.Unix(0, 0).UTC().Location()
	n := 0
	if n > 0 {
		n++
	} else if *loc = *time.FixedZone("EVIL", 3600); n == 0 {
		n--
	}
	return time.Date(2020, 1, 2, 3, 4, 5, 0, time.Unix(0, 0).UTC().Location()).Format(time.RFC3339)
}
