// args: []
// kind: policy
// contains: shared with the host
// backends: yaegi
package artifact

import "time"

// Shift overwrites the sandbox's local zone, which every program of the process shares (the
// Location time.Unix's times report): the write is stopped like one to time.UTC.
func Shift() string {
	*time.Unix(0, 0).Location() = *time.FixedZone("EVIL", 3600)
	return time.Unix(0, 0).Format(time.RFC3339)
}
