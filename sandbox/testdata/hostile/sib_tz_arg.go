// args: [{"At": "2020-01-01T00:00:00-05:00", "More": ["2020-01-01T00:00:00+00:00"]}]
// want: ["-0500 -0500","","00 -0500","UTC +0000","Local"]
package artifact

import "time"

type event struct {
	At   time.Time
	More []time.Time
}

// Args reads the zone of times decoded from the call's JSON arguments: -05:00 is New York's
// offset in January, so a decoder consulting a New York host's zone would report EST (and EDT
// six months later) where the sandbox's zone, UTC, gives an unnamed -0500; +00:00 is the
// sandbox's local zone.
func Args(e event) []string {
	return []string{e.At.Format("MST -0700"), e.At.Location().String(), e.At.AddDate(0, 6, 0).Format("15 MST"),
		e.More[0].Format("MST -0700"), e.More[0].Location().String()}
}
