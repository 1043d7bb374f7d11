package symbols

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"regexp"
	"regexp/syntax"
	"strings"
	"testing"
	"time"
)

// TestGuestZeroActsAsFixedZoneZero checks that the guest's FixedZone("", 0) is, but for its
// pointer, the zone time.FixedZone gives: same name, offset, formatting and encodings.
func TestGuestZeroActsAsFixedZoneZero(t *testing.T) {
	if guestFixedZone("", 0) != guestZero || guestFixedZone("", 0) == hostZero {
		t.Fatal("the table's FixedZone(\"\", 0) is not the guest's own zone")
	}
	if guestFixedZone("", 3600) != time.FixedZone("", 3600) || guestFixedZone("X", 0).String() != "X" {
		t.Fatal("the table's FixedZone changed a zone other than the unnamed one at offset 0")
	}
	layouts := []string{time.RFC3339Nano, time.RFC1123, time.RFC1123Z, time.RFC822, time.UnixDate, time.Kitchen, "MST -07 -07:00:00 Z07"}
	for _, at := range []time.Time{time.Date(2020, 7, 1, 12, 0, 0, 5, time.UTC), time.Date(1901, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)} {
		g, h := at.In(guestZero), at.In(hostZero)
		gn, goff := g.Zone()
		hn, hoff := h.Zone()
		if gn != hn || goff != hoff || g.Location().String() != h.Location().String() || g.String() != h.String() || g.IsDST() != h.IsDST() {
			t.Errorf("%v: zone %q %d %q, want %q %d %q", at, gn, goff, g.Location(), hn, hoff, h.Location())
		}
		for _, l := range layouts {
			if g.Format(l) != h.Format(l) {
				t.Errorf("Format(%q) = %q, want %q", l, g.Format(l), h.Format(l))
			}
		}
		gj, _ := g.MarshalJSON()
		hj, _ := h.MarshalJSON()
		gb, _ := g.MarshalBinary()
		hb, _ := h.MarshalBinary()
		if !bytes.Equal(gj, hj) || !bytes.Equal(gb, hb) {
			t.Errorf("encodings %s %x, want %s %x", gj, gb, hj, hb)
		}
	}
}

// TestGuestParseInLocationKeepsTheGuestsZero compares the table's ParseInLocation with time's:
// the same times, with the guest's own zone where time's gives its cached unnamed zone at 0.
func TestGuestParseInLocationKeepsTheGuestsZero(t *testing.T) {
	cet := time.FixedZone("CET", 3600)
	for _, v := range []string{"2020-01-01T00:00:00+00:00", "2020-01-01T00:00:00+01:00", "2020-01-01T00:00:00Z", "2020-01-01T00:00:00-05:00", "bad"} {
		got, gotErr := guestParseInLocation(time.RFC3339, v, cet)
		want, wantErr := time.ParseInLocation(time.RFC3339, v, cet)
		if (gotErr == nil) != (wantErr == nil) || !got.Equal(want) || got.Format(time.RFC1123Z+" MST") != want.Format(time.RFC1123Z+" MST") {
			t.Errorf("%q: %v %v, want %v %v", v, got, gotErr, want, wantErr)
		}
		if wl, gl := want.Location(), got.Location(); wl == hostZero && gl != guestZero || wl != hostZero && gl != wl {
			t.Errorf("%q: zone %p, want the guest's own zone for %p", v, gl, wl)
		}
	}
}

// TestHostOwnedZones lists the zones no guest may write through and some it may.
func TestHostOwnedZones(t *testing.T) {
	owned := []*time.Location{time.UTC, time.Local, GuestLocal, guestZero}
	for h := -12; h <= 14; h++ {
		owned = append(owned, time.FixedZone("", h*3600))
	}
	parsed, err := time.Parse(time.RFC3339, "2020-01-01T00:00:00+01:00")
	if err != nil {
		t.Fatal(err)
	}
	owned = append(owned, parsed.Location())
	for _, l := range owned {
		if !HostOwned(l) {
			t.Errorf("%q (%p) is not host-owned", l, l)
		}
	}
	own, err := time.LoadLocationFromTZData("", tzif(""))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []any{time.FixedZone("", 1800), time.FixedZone("X", 3600), time.FixedZone("", 15*3600), own, (*time.Location)(nil), new(int), nil} {
		if HostOwned(p) {
			t.Errorf("%v is host-owned", p)
		}
	}
}

// TestSyntaxCompileOwnsItsRunes writes into the Rune of every instruction the table's Compile
// gives for . and (?s).: what the process compiles afterwards must not change.
func TestSyntaxCompileOwnsItsRunes(t *testing.T) {
	compile := Symbols["regexp/syntax/syntax"]["Compile"].Interface().(func(*syntax.Regexp) (*syntax.Prog, error))
	for _, pat := range []string{".", "(?s).", "a.b"} {
		re, err := syntax.Parse(pat, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		prog, err := compile(re.Simplify())
		if err != nil {
			t.Fatal(err)
		}
		for i := range prog.Inst {
			for j := range prog.Inst[i].Rune {
				prog.Inst[i].Rune[j] = 'z'
			}
		}
	}
	for _, pat := range []string{"^.$", "(?s)^.$"} {
		if !regexp.MustCompile(pat).MatchString("b") {
			t.Errorf("%s no longer matches b: the guest wrote the process's own runes", pat)
		}
	}
}

// TestGuestDecoderIsJSONDecoder checks that the guest's json.Decoder answers as encoding/json's
// (every method, on the same input) and fixes the zones of what Decode decoded.
func TestGuestDecoderIsJSONDecoder(t *testing.T) {
	const in = `{"a": [1, 2.5, "x", null, true]} "2020-01-01T00:00:00+00:00" {"b": 1} rest`
	newDecoder := Symbols["encoding/json/json"]["NewDecoder"].Interface().(func(io.Reader) *jsonDecoder)
	g, n := newDecoder(strings.NewReader(in)), json.NewDecoder(strings.NewReader(in))
	g.UseNumber()
	n.UseNumber()
	for range 10 { // { "a" [ 1 2.5 "x" null true ] }
		gt, ge := g.Token()
		nt, ne := n.Token()
		if !reflect.DeepEqual(gt, nt) || (ge == nil) != (ne == nil) || g.More() != n.More() || g.InputOffset() != n.InputOffset() {
			t.Fatalf("Token %v %v, want %v %v", gt, ge, nt, ne)
		}
	}
	var gv, nv time.Time
	if ge, ne := g.Decode(&gv), n.Decode(&nv); ge != nil || ne != nil || !gv.Equal(nv) || gv.Location() != GuestLocal {
		t.Errorf("Decode: %v %v (%q), want %v %v in the guest's zone", gv, ge, gv.Location(), nv, ne)
	}
	g.DisallowUnknownFields()
	n.DisallowUnknownFields()
	var gs, ns struct{ A int }
	ge, ne := g.Decode(&gs), n.Decode(&ns)
	if ge == nil || ne == nil || ge.Error() != ne.Error() {
		t.Errorf("Decode with unknown fields: %v, want %v", ge, ne)
	}
	gb, _ := io.ReadAll(g.Buffered())
	nb, _ := io.ReadAll(n.Buffered())
	if string(gb) != string(nb) {
		t.Errorf("Buffered %q, want %q", gb, nb)
	}
}
