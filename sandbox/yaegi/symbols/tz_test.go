package symbols

import (
	"encoding/json"
	"testing"
	"time"
)

// asIfLocal runs f with the process's time.Local set to GuestLocal: the reference the guest's
// wrappers must match exactly (what code would get under wasm, where Local is UTC). It restores
// the host's zone (these tests do not run in parallel).
func asIfLocal(f func()) {
	saved := time.Local
	time.Local = GuestLocal
	defer func() { time.Local = saved }()
	f()
}

func newYork(t *testing.T) {
	loc, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skipf("no zone data for America/New_York: %v", err)
	}
	saved := time.Local
	time.Local = loc
	t.Cleanup(func() { time.Local = saved })
}

// TestGuestParseIsParseInTheGuestZone compares guestParse, on a New York host, with time.Parse
// run with the guest's zone as the local one, over layouts with and without zones.
func TestGuestParseIsParseInTheGuestZone(t *testing.T) {
	newYork(t)
	cases := [][2]string{
		{time.RFC3339, "2020-01-01T00:00:00-05:00"}, {time.RFC3339, "2020-07-01T00:00:00-04:00"},
		{time.RFC3339, "2020-07-01T00:00:00+00:00"}, {time.RFC3339, "2020-07-01T00:00:00Z"},
		{time.RFC3339Nano, "2020-07-01T00:00:00.5+01:00"}, {time.RFC1123, "Wed, 01 Jan 2020 00:00:00 EST"},
		{time.RFC1123, "Wed, 01 Jul 2020 00:00:00 UTC"}, {time.RFC1123, "Wed, 01 Jul 2020 00:00:00 GMT"},
		{time.RFC1123Z, "Wed, 01 Jul 2020 00:00:00 +0000"}, {"2006-01-02 15:04", "2020-07-01 00:00"},
		{"2006-01-02 15:04 MST", "2020-07-01 00:00 CEST"}, {"2006-01-02 15:04:05 -07:00:00", "2020-07-01 00:00:00 +00:00:01"},
		{time.Kitchen, "3:04PM"}, {time.RFC3339, "not a time"},
	}
	for _, c := range cases {
		got, gotErr := guestParse(c[0], c[1])
		var want time.Time
		var wantErr error
		asIfLocal(func() { want, wantErr = time.Parse(c[0], c[1]) })
		if (gotErr == nil) != (wantErr == nil) {
			t.Errorf("Parse(%q, %q): error %v, want %v", c[0], c[1], gotErr, wantErr)
			continue
		}
		gn, go_ := got.Zone()
		wn, wo := want.Zone()
		if !got.Equal(want) || gn != wn || go_ != wo || got.Location().String() != want.Location().String() {
			t.Errorf("Parse(%q, %q) = %v (%s %d, %s), want %v (%s %d, %s)", c[0], c[1], got, gn, go_, got.Location(), want, wn, wo, want.Location())
		}
	}
}

// TestGuestUnixIsUnixInTheGuestZone compares the Unix wrappers with time.Unix & co. in the guest's zone.
func TestGuestUnixIsUnixInTheGuestZone(t *testing.T) {
	newYork(t)
	var want [3]time.Time
	asIfLocal(func() {
		want = [3]time.Time{time.Unix(1593561600, 5), time.UnixMilli(1593561600005), time.UnixMicro(1593561600000005)}
	})
	got := [3]time.Time{guestUnix(1593561600, 5), guestUnixMilli(1593561600005), guestUnixMicro(1593561600000005)}
	if got != want {
		t.Errorf("got %v, want %v", got, want)
	}
}

type decoded struct {
	At    time.Time
	ByKey map[time.Time]time.Time
	Any   any
	Next  *decoded
}

// TestZonesOfMatchesDecodingInTheGuestZone decodes the same document on a New York host, then
// fixes the zones, and with the guest's zone as the local one: the values must be identical,
// map keys, pointers and a cycle included.
func TestZonesOfMatchesDecodingInTheGuestZone(t *testing.T) {
	newYork(t)
	doc := []byte(`{"At":"2020-01-01T00:00:00-05:00","ByKey":{"2020-07-01T00:00:00-04:00":"2020-07-01T00:00:00+00:00"},
		"Next":{"At":"2020-07-01T00:00:00+00:00"}}`)
	var got, want decoded
	var held, heldWant time.Time
	got.Any, want.Any = &held, &heldWant
	if err := guestUnmarshal(doc, &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(`"2020-01-01T00:00:00-05:00"`), &held); err != nil {
		t.Fatal(err)
	}
	got.Next.Next = &got // a cycle
	ZonesOf(&got)
	asIfLocal(func() {
		if err := json.Unmarshal(doc, &want); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(`"2020-01-01T00:00:00-05:00"`), &heldWant); err != nil {
			t.Fatal(err)
		}
	})
	same := func(what string, a, b time.Time) {
		an, ao := a.Zone()
		bn, bo := b.Zone()
		if !a.Equal(b) || an != bn || ao != bo || a.Location().String() != b.Location().String() {
			t.Errorf("%s: %v (%s %d %s), want %v (%s %d %s)", what, a, an, ao, a.Location(), b, bn, bo, b.Location())
		}
	}
	same("At", got.At, want.At)
	same("Next.At", got.Next.At, want.Next.At)
	same("held in Any", held, heldWant)
	if len(got.ByKey) != 1 {
		t.Fatalf("ByKey: %v", got.ByKey)
	}
	for k, v := range got.ByKey {
		for wk, wv := range want.ByKey {
			same("key", k, wk)
			same("value", v, wv)
		}
	}
}

// BenchmarkZonesOf measures what the zone fix adds to decoding a call's argument: plain is
// json.Unmarshal alone (the baseline), zones the same followed by ZonesOf.
func BenchmarkZonesOf(b *testing.B) {
	args := []struct {
		name string
		doc  string
		new  func() any
	}{
		{"int", `42`, func() any { return new(int) }},
		{"struct_with_time", `{"At":"2020-01-01T00:00:00-05:00","ByKey":{},"Any":null}`, func() any { return new(decoded) }},
		{"any_doc", `{"a":[1,2,3],"b":{"c":"d"}}`, func() any { return new(any) }},
	}
	for _, a := range args {
		for _, fix := range []bool{false, true} {
			name := a.name + "/plain"
			if fix {
				name = a.name + "/zones"
			}
			b.Run(name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					v := a.new()
					if err := json.Unmarshal([]byte(a.doc), v); err != nil {
						b.Fatal(err)
					}
					if fix {
						ZonesOf(v)
					}
				}
			})
		}
	}
}
