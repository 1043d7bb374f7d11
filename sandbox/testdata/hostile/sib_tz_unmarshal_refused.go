// args: []
// kind: compile
// contains: keeps_the_host_zone
// backends: yaegi
package artifact

import "time"

// Decode takes Time.UnmarshalJSON as a method value: in-process yaegi cannot fix the zone of
// what it decodes afterwards (the receiver is bound inside the value), so the program is refused
// rather than handed a time in the host's zone (New York's EST for -05:00 in January). Under
// wasm this simply works.
func Decode() string {
	var t time.Time
	f := t.UnmarshalJSON
	if err := f([]byte(`"2020-01-01T00:00:00-05:00"`)); err != nil {
		return err.Error()
	}
	return t.Format("MST")
}
