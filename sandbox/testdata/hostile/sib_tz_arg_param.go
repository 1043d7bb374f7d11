// args: ["2020-01-01T00:00:00-05:00", "2020-07-01T00:00:00-04:00"]
// want: ["-0500 -0500", "", "00 -0500", "-0400 -0400", ""]
// backends: yaegi
package artifact

import "time"

// Args reads the zone of time.Time parameters decoded from the call's JSON arguments (New York's
// offsets in January and July): the sandbox's zone is UTC, so both are unnamed fixed offsets.
// (yaegi only: the wasm backend's generated wrapper does not build with a time.Time parameter
// yet, "undefined: time".)
func Args(t, u time.Time) []string {
	return []string{t.Format("MST -0700"), t.Location().String(), t.AddDate(0, 6, 0).Format("15 MST"),
		u.Format("MST -0700"), u.Location().String()}
}
