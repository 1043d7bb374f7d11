// args: []
// want: ["kept +0000 /true","decoded UTC Local/false","held +0000 /true","map kept +0000 /true","map decoded UTC Local/false","parsed in +0000 /true","same zone true"]
package artifact

import (
	"encoding/json"
	"time"
)

type doc struct {
	Kept    time.Time
	Decoded time.Time
	Held    any
}

// Zones decodes JSON into values that already hold times in a zone the code made itself,
// time.FixedZone("", 0): the decode must leave those alone and put only what it decoded
// ("+00:00", which the local zone UTC matches, as under wasm) in the local zone. A "+00:00"
// parsed in a zone of another offset gets the unnamed zone at offset 0, the very one FixedZone
// returns.
func Zones() []string {
	z := time.FixedZone("", 0)
	at := time.Date(2020, 1, 1, 0, 0, 0, 0, z)
	held := at
	d := doc{Kept: at, Held: &held}
	m := map[string]time.Time{"kept": at}
	const s = `"2020-01-01T00:00:00+00:00"`
	if err := json.Unmarshal([]byte(`{"Decoded":`+s+`}`), &d); err != nil {
		return []string{err.Error()}
	}
	if err := json.Unmarshal([]byte(`{"decoded":`+s+`}`), &m); err != nil {
		return []string{err.Error()}
	}
	p, err := time.ParseInLocation(time.RFC3339, s[1:len(s)-1], time.FixedZone("CET", 3600))
	if err != nil {
		return []string{err.Error()}
	}
	show := func(label string, t time.Time) string {
		return label + " " + t.Format("MST") + " " + t.Location().String() + "/" + map[bool]string{true: "true", false: "false"}[t.Location() == z]
	}
	return []string{show("kept", d.Kept), show("decoded", d.Decoded), show("held", held), show("map kept", m["kept"]),
		show("map decoded", m["decoded"]), show("parsed in", p), "same zone " + map[bool]string{true: "true", false: "false"}[time.FixedZone("", 0) == z]}
}
