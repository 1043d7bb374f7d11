// args: []
// kind: policy
// contains: shared with the host
// backends: yaegi
package artifact

import "time"

// Shift overwrites the zone time.FixedZone("", 3600) returns, which the time package caches by
// the hour for the whole process (what it also gives a parsed "+01:00"), then the guest's own
// unnamed zone at offset 0, which every program of the process shares. Both writes are stopped.
func Shift() []string {
	var out []string
	for _, off := range []int{3600, 0} {
		func() {
			defer func() { recover() }()
			*time.FixedZone("", off) = *time.FixedZone("EVIL", 7200)
		}()
		out = append(out, time.Date(2020, 1, 1, 0, 0, 0, 0, time.FixedZone("", off)).Format("MST"))
	}
	return out
}
