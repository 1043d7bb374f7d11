// args: []
// kind: policy
// contains: shared with the host
// backends: yaegi
package artifact

import "time"

// Shift writes the host's UTC location in the init statements of an expression switch and of a
// type switch.
func Shift() string {
	loc := time.Unix(0, 0).UTC().Location()
	switch *loc = *time.FixedZone("EVIL", 3600); {
	default:
	}
	var v any = 1
	switch *loc = *time.FixedZone("EVIL", 7200); v.(type) {
	case int:
	}
	return time.Date(2020, 1, 2, 3, 4, 5, 0, time.Unix(0, 0).UTC().Location()).Format(time.RFC3339)
}
