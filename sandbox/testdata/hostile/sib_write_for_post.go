// args: []
// kind: policy
// contains: shared with the host
// backends: yaegi
package artifact

import "time"

// Shift writes the host's UTC location in a for loop's post statement (and its init).
func Shift() string {
	loc := time.Unix(0, 0).UTC().Location()
	for i := 0; i < 1; *loc = *time.FixedZone("EVIL", 3600) {
		i++
	}
	return time.Date(2020, 1, 2, 3, 4, 5, 0, time.Unix(0, 0).UTC().Location()).Format(time.RFC3339)
}
