package symbols

import (
	"encoding/json"
	"io"
	"reflect"
	"sync"
	"time"

	guestjson "github.com/artifactforge/forge/sandbox/yaegi/symbols/internal/json"
)

// Guest time zone. Sandboxed code must see UTC whatever the host's zone, as it does under wasm
// (GOOS=wasip1, where time.Local is a Location named "Local" with the single zone UTC+0). The
// host's time.Local is not the sandbox's to change, so the functions that hand out times located
// in time.Local are replaced in the time table (gen/main.go: Unix, UnixMilli, UnixMicro, Parse),
// json.Unmarshal and the guest's json.Decoder (internal/json) are followed by a fix of the zones
// they decoded (ZonesOf), and the rewrite
// (sandbox/yaegi/rewrite.go) routes what remains through the unexported helpers below: a call
// of Time.Local, and the Unmarshal methods that consult time.Local. Guest code cannot name the
// helpers (the gate allows exported names only); the rewrite alone emits them.

// GuestLocal is the sandbox's time.Local: named "Local", one zone "UTC" at offset 0, exactly
// what wasip1's time.Local reports (Location().String() "Local", Zone() "UTC", 0). It is shared
// by every interpreter of the process, so it is one of the host-owned values guest code must
// never write through (slot.checkWrite).
var GuestLocal = func() *time.Location {
	loc, err := time.LoadLocationFromTZData("Local", tzif("UTC"))
	if err != nil {
		panic("symbols: the guest's UTC zone does not load: " + err.Error())
	}
	return loc
}()

// tzif returns a minimal TZif file (RFC 8536, version 1): no transitions, one local time type
// (UTC+0, standard time) whose designation is abbrev.
func tzif(abbrev string) []byte {
	data := []byte("TZif")
	data = append(data, make([]byte, 16)...) // version 0 and 15 reserved bytes
	// isutcnt isstdcnt leapcnt timecnt typecnt charcnt
	for _, n := range []uint32{0, 0, 0, 0, 1, uint32(len(abbrev) + 1)} {
		data = append(data, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	data = append(data, 0, 0, 0, 0, 0, 0) // utoff 0, isdst 0, desigidx 0
	return append(append(data, abbrev...), 0)
}

// hostZero is the unnamed fixed zone at offset 0 that the time package hands out to any caller
// (time.FixedZone caches its unnamed zones by the hour): the zone time's parsers give "+00:00"
// when the local zone is not UTC.
var hostZero = time.FixedZone("", 0)

// guestZero is the guest's time.FixedZone("", 0): the same zone as hostZero under another
// pointer, so that a zone the guest made itself is told apart from one a decoder made (which
// InGuestZone moves to GuestLocal). It is shared by every interpreter, like GuestLocal.
var guestZero = func() *time.Location {
	loc, err := time.LoadLocationFromTZData("", tzif(""))
	if err != nil {
		panic("symbols: the guest's unnamed zone at offset 0 does not load: " + err.Error())
	}
	return loc
}()

// InGuestZone returns t with the zone guest code would have got under wasm: a time the host
// located in time.Local is moved to GuestLocal when its offset is 0 and to an unnamed fixed zone
// of its offset otherwise (what time's parsers do for an offset that is not the local zone's),
// and one in the host's unnamed fixed zone at offset 0 becomes GuestLocal (what the parsers give
// for "+00:00" when the local zone is UTC). Any other time is returned as it is: a guest's own
// FixedZone("", 0) is guestZero, never hostZero (guestFixedZone, guestParseInLocation).
func InGuestZone(t time.Time) time.Time {
	switch loc := t.Location(); {
	case loc == time.Local && loc != GuestLocal:
		if _, off := t.Zone(); off != 0 {
			return t.In(time.FixedZone("", off))
		}
		return t.In(GuestLocal)
	case loc == hostZero:
		return t.In(GuestLocal)
	}
	return t
}

// guestFixedZone is the guest's time.FixedZone: the unnamed zone at offset 0 is guestZero.
func guestFixedZone(name string, offset int) *time.Location {
	if name == "" && offset == 0 {
		return guestZero
	}
	return time.FixedZone(name, offset)
}

// guestParseInLocation is time.ParseInLocation with guestZero for the unnamed zone at offset 0
// (what it gives for "+00:00" in a zone whose offset is not 0 then).
func guestParseInLocation(layout, value string, loc *time.Location) (time.Time, error) {
	t, err := time.ParseInLocation(layout, value, loc)
	if t.Location() == hostZero {
		t = t.In(guestZero)
	}
	return t, err
}

// HostOwned reports whether p is a *time.Location that the time package or this package hands
// out to every caller, so that guest code writing through it (*loc = ...) would change the zone
// of the host and of every other program: time.UTC (what t.UTC().Location() is), time.Local,
// the unnamed fixed zones time.FixedZone caches by the hour (what a parsed "+01:00" reports),
// GuestLocal and guestZero. The yaegi sandbox stops such a write (slot.checkWrite).
func HostOwned(p any) bool {
	loc, ok := p.(*time.Location)
	if !ok || loc == nil {
		return false
	}
	if loc == time.UTC || loc == time.Local || loc == GuestLocal || loc == guestZero {
		return true
	}
	for _, z := range cachedZones {
		if loc == z {
			return true
		}
	}
	return false
}

// cachedZones are the unnamed fixed zones time.FixedZone hands out by the hour (UTC-12 to
// UTC+14, Go 1.20 on): one Location per offset for the whole process.
var cachedZones = func() []*time.Location {
	var zs []*time.Location
	for h := -12; h <= 14; h++ {
		if z := time.FixedZone("", h*3600); z == time.FixedZone("", h*3600) {
			zs = append(zs, z)
		}
	}
	return zs
}()

func guestUnix(sec, nsec int64) time.Time { return time.Unix(sec, nsec).In(GuestLocal) }
func guestUnixMilli(msec int64) time.Time { return time.UnixMilli(msec).In(GuestLocal) }
func guestUnixMicro(usec int64) time.Time { return time.UnixMicro(usec).In(GuestLocal) }

// guestParse is time.Parse with GuestLocal as the local zone (and UTC, as always, for a value
// without zone information). ParseInLocation(GuestLocal) gives every other case exactly; a result
// in GuestLocal is told apart (zone offset 0 in the value, or no zone at all) by parsing again in
// a probe zone no value can name.
func guestParse(layout, value string) (time.Time, error) {
	t, err := time.ParseInLocation(layout, value, GuestLocal)
	if err != nil || t.Location() != GuestLocal {
		return t, err
	}
	if p, err := time.ParseInLocation(layout, value, parseProbe); err == nil && p.Location() == parseProbe {
		return t.UTC(), nil // no zone in the value: Parse's default is UTC
	}
	return t, nil
}

// parseProbe is a zone no layout can match by name (lower case) and whose offset (1s) only a
// value giving seconds in its offset could state, which then gets a fixed zone in both parses.
var parseProbe = time.FixedZone("forge-probe", 1)

// guestUnmarshal is json.Unmarshal followed by the zone fix of what it decoded.
func guestUnmarshal(data []byte, v any) error {
	err := json.Unmarshal(data, v)
	ZonesOf(v)
	return err
}

// jsonDecoder is the guest's json.Decoder: Decode is followed by the zone fix of what it decoded,
// however guest code reaches it (a call, a method value or expression, an interface).
type jsonDecoder = guestjson.Decoder

// newJSONDecoder is the guest's json.NewDecoder.
func newJSONDecoder(r io.Reader) *jsonDecoder { return guestjson.NewDecoder(r, ZonesOf) }

// The helpers the rewrite calls (keys of the time table, see gen/main.go).

// guestLocal is what t.Local() becomes: forge__local(t.Local()). The rewrite also wraps a call
// of Local it cannot prove is time.Time's (through an interface or a type parameter), so a time
// not in the host's zone is returned as it is.
func guestLocal(t time.Time) time.Time {
	if t.Location() == time.Local {
		return t.In(GuestLocal)
	}
	return t
}

// guestLocalFunc is what the method value t.Local becomes.
func guestLocalFunc(f func() time.Time) func() time.Time {
	return func() time.Time { return guestLocal(f()) }
}

// guestFixed is what x.UnmarshalJSON(b) (Text, Binary, GobDecode) becomes:
// forge__fixed(x.UnmarshalJSON(b), &x): the zones of what the call decoded into x are fixed.
func guestFixed(err error, targets ...any) error {
	for _, t := range targets {
		ZonesOf(t)
	}
	return err
}

var timeType = reflect.TypeFor[time.Time]()

// mayHoldTime caches, per type, whether a value of it can hold a time.Time that ZonesOf can reach.
var mayHoldTime sync.Map // reflect.Type -> bool

func holdsTime(t reflect.Type) bool {
	if v, ok := mayHoldTime.Load(t); ok {
		return v.(bool)
	}
	mayHoldTime.Store(t, true) // provisional: a recursive type reaching itself holds what it holds
	r := holdsTimeUncached(t)
	mayHoldTime.Store(t, r)
	return r
}

func holdsTimeUncached(t reflect.Type) bool {
	if t == timeType {
		return true
	}
	switch t.Kind() {
	case reflect.Interface:
		return true
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return holdsTime(t.Elem())
	case reflect.Map:
		return holdsTime(t.Key()) || holdsTime(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if holdsTime(t.Field(i).Type) {
				return true
			}
		}
	}
	return false
}

// mayHold reports whether v, a map key or value, can hold a time: for an interface, its dynamic
// value's type decides.
func mayHold(v reflect.Value) bool {
	if v.Kind() == reflect.Interface {
		return !v.IsNil() && holdsTime(v.Elem().Type())
	}
	return holdsTime(v.Type())
}

// isReference reports whether v (or an interface's dynamic value) is a pointer, map or slice:
// what it reaches can be fixed without storing v back.
func isReference(v reflect.Value) bool {
	if v.Kind() == reflect.Interface && !v.IsNil() {
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice:
		return true
	}
	return false
}

// ZonesOf moves every time.Time reachable from v (through pointers, interfaces, slices, arrays,
// map values and struct fields) into the guest's zone (InGuestZone): what a decoder that
// consults time.Local (json, Time.UnmarshalJSON and its siblings) gave guest code.
func ZonesOf(v any) {
	if v == nil {
		return
	}
	if holdsTime(reflect.TypeOf(v)) {
		fixZones(reflect.ValueOf(v), map[uintptr]bool{})
	}
}

// fixZones fixes the times in v (those it can set) and reports whether v holds one that needed
// it: a value copied out of a map or an interface is then stored back.
func fixZones(v reflect.Value, seen map[uintptr]bool) bool {
	if !v.IsValid() || !v.CanInterface() || !holdsTime(v.Type()) {
		// Values reached through unexported fields (the interpreter's own representation of
		// guest interface values among them) are neither read nor set: decoders cannot reach
		// them either, and the rewrite hands such an interface's dynamic value over instead.
		return false
	}
	if v.Type() == timeType {
		t := v.Interface().(time.Time)
		u := InGuestZone(t)
		if u == t {
			return false
		}
		if v.CanSet() {
			v.Set(reflect.ValueOf(u))
		}
		return true
	}
	changed := false
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() || seen[v.Pointer()] {
			return false
		}
		seen[v.Pointer()] = true
		fixZones(v.Elem(), seen)
	case reflect.Interface:
		if v.IsNil() {
			return false
		}
		e := v.Elem()
		if !holdsTime(e.Type()) {
			return false
		}
		if e.Kind() == reflect.Pointer || e.Kind() == reflect.Map || e.Kind() == reflect.Slice {
			return fixZones(e, seen) // a reference: fixed in place
		}
		c := reflect.New(e.Type()).Elem()
		c.Set(e)
		if changed = fixZones(c, seen); changed && v.CanSet() {
			v.Set(c)
		}
	case reflect.Slice:
		for i := range v.Len() {
			fixZones(v.Index(i), seen)
		}
	case reflect.Array:
		for i := range v.Len() {
			changed = fixZones(v.Index(i), seen) || changed
		}
	case reflect.Map:
		if v.IsNil() || seen[v.Pointer()] {
			return false
		}
		seen[v.Pointer()] = true
		type entry struct{ old, key, val reflect.Value }
		var moved []entry
		it := v.MapRange()
		for it.Next() {
			kh, vh := mayHold(it.Key()), mayHold(it.Value())
			if !kh && !vh {
				continue // json's map[string]any: strings, numbers, ... copied for nothing
			}
			if !kh && isReference(it.Value()) {
				fixZones(it.Value(), seen) // fixed in place: no copy to store back
				continue
			}
			k := reflect.New(it.Key().Type()).Elem()
			k.Set(it.Key())
			e := reflect.New(it.Value().Type()).Elem()
			e.Set(it.Value())
			kc, ec := fixZones(k, seen), fixZones(e, seen)
			switch {
			case kc: // a time key (decoded by UnmarshalText) moves to its fixed key
				moved = append(moved, entry{it.Key(), k, e})
			case ec:
				v.SetMapIndex(it.Key(), e)
			}
		}
		for _, m := range moved {
			v.SetMapIndex(m.old, reflect.Value{})
		}
		for _, m := range moved {
			v.SetMapIndex(m.key, m.val)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			changed = fixZones(v.Field(i), seen) || changed
		}
	}
	return changed
}
