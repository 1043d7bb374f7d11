// args: []
// kind: policy
// contains: shared with the host
// backends: yaegi
package artifact

import "time"

// Shift overwrites the zone a parsed "+01:00" reports: time.FixedZone's unnamed zone for that
// hour, which the time package hands to every caller in the process. Unstopped, every time the
// host or another program parses with that offset afterwards would be named EVIL at +02:00.
// Under wasm the zone is the guest's own (its own process): the case runs on yaegi only.
func Shift() string {
	t, err := time.Parse(time.RFC3339, "2020-01-01T00:00:00+01:00")
	if err != nil {
		return err.Error()
	}
	*t.Location() = *time.FixedZone("EVIL", 7200)
	u, _ := time.Parse(time.RFC3339, "2020-01-01T00:00:00+01:00")
	return u.Format(time.RFC3339 + " MST")
}
