// args: []
// want: ["-0500 ", "-0500 ", "-0500 ", "-0500 "]
package artifact

import (
	"encoding/json"
	"time"
)

type unmarshaler interface{ UnmarshalJSON([]byte) error }

type stamped struct {
	time.Time
	Note string
}

func viaGeneric[T interface{ UnmarshalJSON([]byte) error }](t T, b []byte) error {
	return t.UnmarshalJSON(b)
}

// Decodes reaches Time.UnmarshalJSON indirectly: through an interface of its own, json's
// Unmarshaler, a type parameter and a struct embedding time.Time. -05:00 is New York's offset in
// January: each time must come out in an unnamed fixed zone, as under wasm, never the host's EST.
func Decodes() []string {
	b := []byte(`"2020-01-01T00:00:00-05:00"`)
	var a, c, d time.Time
	var s stamped
	var u unmarshaler = &a
	var j json.Unmarshaler = &c
	if err := u.UnmarshalJSON(b); err != nil {
		return []string{err.Error()}
	}
	if err := j.UnmarshalJSON(b); err != nil {
		return []string{err.Error()}
	}
	if err := viaGeneric(&d, b); err != nil {
		return []string{err.Error()}
	}
	if err := s.UnmarshalJSON(b); err != nil {
		return []string{err.Error()}
	}
	var out []string
	for _, t := range []time.Time{a, c, d, s.Time} {
		out = append(out, t.Format("MST")+" "+t.Location().String())
	}
	return out
}
