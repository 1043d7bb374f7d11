// args: []
// want: "2020-01-02T03:04:05Z"
// backends: yaegi
package artifact

import "time"

// Shift has a pointer of its own checked, then lets the right-hand side point it at the host's
// UTC location before the write. The check and the write must use the same pointer: the one
// evaluated first (Go leaves the order of the variable's read and the call unspecified), so the
// write lands in the program's own Location and the host's UTC is untouched.
func Shift() string {
	mine := *time.FixedZone("MINE", 0)
	loc := &mine
	*loc = func() time.Location {
		loc = time.Unix(0, 0).UTC().Location()
		return *time.FixedZone("EVIL", 3600)
	}()
	return time.Date(2020, 1, 2, 3, 4, 5, 0, time.Unix(0, 0).UTC().Location()).Format(time.RFC3339)
}
