// args: []
// want: ["2020-01-01T00:00 -0500 -0500  00 -0500","2020-01-01T00:00 -0500 -0500  00 -0500","2020-01-01T00:00 -0500 -0500  00 -0500","2020-01-01T00:00 -0500 -0500  00 -0500","2020-01-01T00:00 -0500 -0500  00 -0500","2020-01-01T00:00 -0500 -0500  00 -0500","2020-01-01T00:00 -0500 -0500  00 -0500","2020-01-01T00:00 -0500 -0500  00 -0500","2020-01-01T00:00 -0500 -0500  00 -0500"]
package artifact

import (
	"bytes"
	"encoding/json"
	"time"
)

type event struct {
	At    time.Time
	Ptr   *time.Time
	Times []time.Time
	ByKey map[string]time.Time
	Any   any
}

func show(t time.Time) string {
	return t.Format("2006-01-02T15:04 MST -0700") + " " + t.Location().String() + " " + t.AddDate(0, 6, 0).Format("15 MST")
}

// Decodes decodes times every way that consults the local zone: json.Unmarshal (struct field,
// pointer, slice, map, a *time.Time held in an interface), a json.Decoder, Time.UnmarshalJSON,
// UnmarshalText and UnmarshalBinary. -05:00 in January is New York's offset: on a host in that
// zone the decoders would locate the time in the host's zone (named EST, then EDT in July).
func Decodes() []string {
	const s = `"2020-01-01T00:00:00-05:00"`
	var e event
	var held time.Time
	e.Any = &held
	doc := `{"At":` + s + `,"Ptr":` + s + `,"Times":[` + s + `],"ByKey":{"k":` + s + `},"Any":` + s + `}`
	if err := json.Unmarshal([]byte(doc), &e); err != nil {
		return []string{err.Error()}
	}
	var d time.Time
	if err := json.NewDecoder(bytes.NewReader([]byte(s))).Decode(&d); err != nil {
		return []string{err.Error()}
	}
	var m, x, b time.Time
	if err := m.UnmarshalJSON([]byte(s)); err != nil {
		return []string{err.Error()}
	}
	if err := x.UnmarshalText([]byte(s[1 : len(s)-1])); err != nil {
		return []string{err.Error()}
	}
	bin, _ := time.Date(2020, 1, 1, 0, 0, 0, 0, time.FixedZone("", -5*3600)).MarshalBinary()
	if err := b.UnmarshalBinary(bin); err != nil {
		return []string{err.Error()}
	}
	return []string{show(e.At), show(*e.Ptr), show(e.Times[0]), show(e.ByKey["k"]), show(held), show(d), show(m), show(x), show(b)}
}
