// args: []
// kind: policy
// contains: shared with the host
// backends: yaegi
package artifact

import "time"

// Shift writes the host's UTC location through a pointer whose declared type names the package's
// type (var loc *time.Location): the file's type check knows it is a pointer, but not to what.
func Shift() string {
	var loc *time.Location = time.Unix(0, 0).UTC().Location()
	*loc = *time.FixedZone("EVIL", 3600)
	return time.Date(2020, 1, 2, 3, 4, 5, 0, time.Unix(0, 0).UTC().Location()).Format(time.RFC3339)
}
