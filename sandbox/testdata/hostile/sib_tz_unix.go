// args: []
// want: [0,"UTC",0,"1970-01-01T00:00:00Z","Local","1970-01-01 00:00:00 +0000 UTC","UTC +0000",false,0,0,"UTC",0,"2020-06-30T00:00:00Z","Local","2020-06-30 00:00:00 +0000 UTC","UTC +0000",false,0,0,"UTC",0,"2020-01-01T00:00:00Z","Local","2020-01-01 00:00:00 +0000 UTC","UTC +0000",false,0]
package artifact

import "time"

// Zones reads the zone of the times time.Unix, UnixMilli and UnixMicro make: the sandbox's
// local zone is UTC (named "Local", as under wasm) whatever the host's zone, in January and in
// July alike (a host zone with daylight saving time shows in the second).
func Zones() []any {
	var out []any
	for _, t := range []time.Time{time.Unix(0, 0), time.UnixMilli(15778368e5 + 181*864e5), time.UnixMicro(15778368e8)} {
		name, off := t.Zone()
		out = append(out, t.Hour(), name, off, t.Format(time.RFC3339), t.Location().String(), t.String(),
			t.Format("MST -0700"), t.IsDST(), t.AddDate(0, 6, 0).Hour())
	}
	return out
}
