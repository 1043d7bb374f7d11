// args: []
// kind: policy
// contains: shared with the host
// backends: yaegi
package artifact

import "time"

type myLoc time.Location

// Shift converts the host's UTC location to a pointer to a type of its own with the same
// underlying type, then writes through it: the check must compare the pointer, not the type.
func Shift() string {
	p := (*myLoc)(time.Unix(0, 0).UTC().Location())
	*p = myLoc(*time.FixedZone("EVIL", 3600))
	return time.Date(2020, 1, 2, 3, 4, 5, 0, time.Unix(0, 0).UTC().Location()).Format(time.RFC3339)
}
