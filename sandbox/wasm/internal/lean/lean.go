// Package lean is the wasm guest's JSON codec for the signatures whose types it covers (int,
// int64, float64, string, bool, and slices and string-keyed maps of them; arrays as results): the
// generated dispatcher decodes arguments and encodes results with it instead of encoding/json,
// fmt and reflect, which would otherwise be linked into every module. The build writes this very
// file into the guest module as package forge/lean; tests hold it to encoding/json natively.
//
// Results are encoded byte for byte as json.Marshal encodes them (HTML escaping, U+FFFD for
// invalid UTF-8, sorted map keys, json's float format, NaN and ±Inf refused with json's error
// text). Arguments are decoded strictly: the decoder accepts only what it decodes exactly as
// encoding/json would and rejects everything else (a syntax or type error, but also escapes of
// surrogates, invalid UTF-8); a rejected argument goes back to the
// host (Reject), which decodes it with the real decoder and either reports encoding/json's own
// error or sends the value again re-encoded by json.Marshal, which the decoder always accepts.
//
// Only the standard packages strconv, unicode/utf8 and slices, none of which links fmt, os or
// reflect.
package lean

import (
	"slices"
	"strconv"
	"unicode/utf8"
)

// Dec reads one JSON argument.
type Dec struct {
	b []byte
	i int
}

// Decoder decodes one value of type T, or reports false for input it does not decode exactly as
// encoding/json would. null decodes as the zero value, as encoding/json leaves a fresh variable,
// slice element or map value it decodes null into.
type Decoder[T any] func(*Dec) (T, bool)

// Encoder appends v's JSON to b; a non-empty string says v cannot be encoded and is the text
// json.UnsupportedValueError carries (NaN, +Inf, -Inf).
type Encoder[T any] func(b []byte, v T) ([]byte, string)

// Decode decodes raw, one whole JSON value, with dec.
func Decode[T any](raw []byte, dec Decoder[T]) (T, bool) {
	d := Dec{b: raw}
	d.ws()
	v, ok := dec(&d)
	d.ws()
	if !ok || d.i != len(d.b) {
		var zero T
		return zero, false
	}
	return v, true
}

func (d *Dec) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// lit consumes the literal s (true, false, null) if it is next.
func (d *Dec) lit(s string) bool {
	if len(d.b)-d.i < len(s) || string(d.b[d.i:d.i+len(s)]) != s {
		return false
	}
	d.i += len(s)
	return true
}

// number returns the JSON number literal at d (the grammar of RFC 8259, nothing more).
func (d *Dec) number() ([]byte, bool) {
	start, b, i := d.i, d.b, d.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return nil, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return nil, false
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return nil, false
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	d.i = i
	return b[start:i], true
}

// Int decodes an integer literal (no fraction, no exponent) that fits in 64 bits: what
// encoding/json accepts into an int or int64 (strconv.ParseInt of the literal), and that value.
func Int[T ~int | ~int64](d *Dec) (T, bool) {
	if d.lit("null") {
		return 0, true
	}
	s, ok := d.number()
	if !ok {
		return 0, false
	}
	for _, c := range s {
		if c == '.' || c == 'e' || c == 'E' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(string(s), 10, 64)
	return T(n), err == nil
}

// Float decodes a JSON number as encoding/json does into a float64 (strconv.ParseFloat of the
// literal; a value out of range is rejected).
func Float(d *Dec) (float64, bool) {
	if d.lit("null") {
		return 0, true
	}
	s, ok := d.number()
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(s), 64)
	return f, err == nil
}

// Bool decodes true or false.
func Bool(d *Dec) (bool, bool) {
	switch {
	case d.lit("null"):
		return false, true
	case d.lit("true"):
		return true, true
	case d.lit("false"):
		return false, true
	}
	return false, false
}

// String decodes a JSON string of valid UTF-8 whose escapes are the short ones or \u escapes
// outside the surrogate range.
func String(d *Dec) (string, bool) {
	if d.lit("null") {
		return "", true
	}
	return d.str()
}

// str decodes a JSON string (not null: an object key).
func (d *Dec) str() (string, bool) {
	b := d.b
	if d.i >= len(b) || b[d.i] != '"' {
		return "", false
	}
	i := d.i + 1
	start, plain := i, true
	for ; i < len(b) && b[i] != '"'; i++ {
		switch c := b[i]; {
		case c < 0x20:
			return "", false
		case c == '\\':
			plain = false
			i++
			if i >= len(b) {
				return "", false
			}
			if b[i] == 'u' {
				if i+4 >= len(b) {
					return "", false
				}
				i += 4
			}
		case c >= utf8.RuneSelf:
			plain = false
		}
	}
	if i >= len(b) {
		return "", false
	}
	body := b[start:i]
	d.i = i + 1
	if plain {
		return string(body), true
	}
	if !utf8.Valid(body) {
		return "", false
	}
	out := make([]byte, 0, len(body))
	for j := 0; j < len(body); j++ {
		c := body[j]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		j++
		switch body[j] {
		case '"', '\\', '/':
			out = append(out, body[j])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(body[j+1 : j+5])
			if !ok || r >= 0xd800 && r < 0xe000 {
				return "", false
			}
			out = utf8.AppendRune(out, r)
			j += 4
		default:
			return "", false
		}
	}
	return string(out), true
}

func hex4(b []byte) (rune, bool) {
	var r rune
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// Slice decodes a JSON array, or null (a nil slice), with elem for its elements. An empty array
// is an empty, non-nil slice, as encoding/json makes it.
func Slice[E any](elem Decoder[E]) Decoder[[]E] {
	return func(d *Dec) ([]E, bool) {
		if d.lit("null") {
			return nil, true
		}
		if d.i >= len(d.b) || d.b[d.i] != '[' {
			return nil, false
		}
		d.i++
		d.ws()
		s := []E{}
		if d.i < len(d.b) && d.b[d.i] == ']' {
			d.i++
			return s, true
		}
		for {
			d.ws()
			v, ok := elem(d)
			if !ok {
				return nil, false
			}
			s = append(s, v)
			d.ws()
			if d.i >= len(d.b) {
				return nil, false
			}
			c := d.b[d.i]
			d.i++
			switch c {
			case ',':
			case ']':
				return s, true
			default:
				return nil, false
			}
		}
	}
}

// Map decodes a JSON object, or null (a nil map), into a map with string keys; a repeated key
// keeps its last value, as encoding/json does.
func Map[E any](elem Decoder[E]) Decoder[map[string]E] {
	return func(d *Dec) (map[string]E, bool) {
		if d.lit("null") {
			return nil, true
		}
		if d.i >= len(d.b) || d.b[d.i] != '{' {
			return nil, false
		}
		d.i++
		d.ws()
		m := map[string]E{}
		if d.i < len(d.b) && d.b[d.i] == '}' {
			d.i++
			return m, true
		}
		for {
			d.ws()
			k, ok := d.str()
			if !ok {
				return nil, false
			}
			d.ws()
			if d.i >= len(d.b) || d.b[d.i] != ':' {
				return nil, false
			}
			d.i++
			d.ws()
			v, ok := elem(d)
			if !ok {
				return nil, false
			}
			m[k] = v
			d.ws()
			if d.i >= len(d.b) {
				return nil, false
			}
			c := d.b[d.i]
			d.i++
			switch c {
			case ',':
			case '}':
				return m, true
			default:
				return nil, false
			}
		}
	}
}

// AppendInt encodes an integer.
func AppendInt[T ~int | ~int64](b []byte, v T) ([]byte, string) {
	return strconv.AppendInt(b, int64(v), 10), ""
}

// AppendBool encodes a boolean.
func AppendBool(b []byte, v bool) ([]byte, string) {
	return strconv.AppendBool(b, v), ""
}

// AppendFloat encodes a float64 as encoding/json does: like ES6, %f between 1e-6 and 1e21,
// exponent form outside (e-7, not e-07); NaN and ±Inf cannot be encoded.
func AppendFloat(b []byte, f float64) ([]byte, string) {
	if f != f || f > maxFloat || f < -maxFloat {
		return b, strconv.FormatFloat(f, 'g', -1, 64)
	}
	abs := f
	if abs < 0 {
		abs = -abs
	}
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, ""
}

const maxFloat = 1.79769313486231570814527423731704356798070e+308

const hexDigits = "0123456789abcdef"

// AppendString encodes s as encoding/json does with HTML escaping (json.Marshal's default).
func AppendString(b []byte, s string) ([]byte, string) {
	return appendString(b, s), ""
}

func appendString(dst []byte, src string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(src); {
		if c := src[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			dst = append(dst, src[start:i]...)
			switch c {
			case '\\', '"':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(src[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, src[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, src[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, src[start:]...)
	return append(dst, '"')
}

// EncSlice encodes a slice (nil as null) with elem for its elements.
func EncSlice[E any](elem Encoder[E]) Encoder[[]E] {
	return func(b []byte, v []E) ([]byte, string) {
		if v == nil {
			return append(b, "null"...), ""
		}
		return encElems(b, v, elem)
	}
}

// EncArray encodes an array's elements (given as a slice of it): never null.
func EncArray[E any](elem Encoder[E]) Encoder[[]E] {
	return func(b []byte, v []E) ([]byte, string) { return encElems(b, v, elem) }
}

func encElems[E any](b []byte, v []E, elem Encoder[E]) ([]byte, string) {
	b = append(b, '[')
	for i, e := range v {
		if i > 0 {
			b = append(b, ',')
		}
		var bad string
		if b, bad = elem(b, e); bad != "" {
			return b, bad
		}
	}
	return append(b, ']'), ""
}

// EncMap encodes a map with string keys (nil as null) in the order of its keys.
func EncMap[E any](elem Encoder[E]) Encoder[map[string]E] {
	return func(b []byte, m map[string]E) ([]byte, string) {
		if m == nil {
			return append(b, "null"...), ""
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			var bad string
			if b, bad = elem(b, m[k]); bad != "" {
				return b, bad
			}
		}
		return append(b, '}'), ""
	}
}

// Arg splits the next framed argument off in (a little-endian uint32 length, then the JSON;
// length 0 means absent). The argument has no capacity past its end.
func Arg(in []byte) (arg, rest []byte) {
	if len(in) < 4 {
		return nil, nil
	}
	n := int(in[0]) | int(in[1])<<8 | int(in[2])<<16 | int(in[3])<<24
	return in[4 : 4+n : 4+n], in[4+n:]
}

// Reject is the result that hands argument i back to the host: 'a' and i (little-endian uint32).
func Reject(i int) []byte {
	return []byte{'a', byte(i), byte(i >> 8), byte(i >> 16), byte(i >> 24)}
}

// Ok is the result v encoded with enc: 'v' and the JSON, or a result error naming the Go type
// (typ) that could not be encoded.
func Ok[T any](v T, enc Encoder[T], typ string) []byte {
	out, bad := enc([]byte{'v'}, v)
	if bad != "" {
		return Fail("result", "encode "+typ+" result: json: unsupported value: "+bad,
			"return JSON-encodable values (no NaN/Inf, funcs, channels or cyclic pointers)", "", 0)
	}
	return out
}

// Null is the result of a function with no value result.
func Null() []byte { return []byte("vnull") }

// Error-text cap: the same cut as sandbox.CapMessage (tests hold them equal).
const (
	MaxErrorBytes = 4 << 10
	capBefore     = " [... "
	capAfter      = " more bytes cut]"
)

// Cap bounds an error or panic text as sandbox.CapMessage does, before it is encoded, so that the
// host never parses more than about MaxErrorBytes of it.
func Cap(s string) string {
	if len(s) <= MaxErrorBytes {
		return s
	}
	cut := MaxErrorBytes
	for cut > MaxErrorBytes-4 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + capBefore + strconv.Itoa(len(s)-cut) + capAfter
}

// Fail is the error result: 'e' and the JSON of the host's sandbox.Error fields (kind, message,
// hint, param, line; the last three omitted when empty), the message capped.
func Fail(kind, message, hint, param string, line int) []byte {
	b := append([]byte{'e'}, `{"kind":`...)
	b = appendString(b, kind)
	b = append(b, `,"message":`...)
	b = appendString(b, Cap(message))
	if hint != "" {
		b = append(b, `,"hint":`...)
		b = appendString(b, hint)
	}
	if param != "" {
		b = append(b, `,"param":`...)
		b = appendString(b, param)
	}
	if line != 0 {
		b = append(b, `,"line":`...)
		b = strconv.AppendInt(b, int64(line), 10)
	}
	return append(b, '}')
}

// PanicText is fmt.Sprint("panic: ", r) for the panic values a module without fmt can see: the
// runtime's (errors), and the standard library's (errors and strings). The dispatcher uses fmt
// itself when the artifact imports fmt or calls panic, so values of its own types never get here.
func PanicText(r any) string {
	var s string
	switch x := r.(type) {
	case string:
		s = x
	case bool:
		s = strconv.FormatBool(x)
	case int:
		s = strconv.FormatInt(int64(x), 10)
	case int8:
		s = strconv.FormatInt(int64(x), 10)
	case int16:
		s = strconv.FormatInt(int64(x), 10)
	case int32:
		s = strconv.FormatInt(int64(x), 10)
	case int64:
		s = strconv.FormatInt(x, 10)
	case uint:
		s = strconv.FormatUint(uint64(x), 10)
	case uint8:
		s = strconv.FormatUint(uint64(x), 10)
	case uint16:
		s = strconv.FormatUint(uint64(x), 10)
	case uint32:
		s = strconv.FormatUint(uint64(x), 10)
	case uint64:
		s = strconv.FormatUint(x, 10)
	case uintptr:
		s = strconv.FormatUint(uint64(x), 10)
	case float64:
		s = strconv.FormatFloat(x, 'g', -1, 64)
	case float32:
		s = strconv.FormatFloat(float64(x), 'g', -1, 32)
	case error:
		s = x.Error()
	case interface{ String() string }:
		s = x.String()
	default:
		s = "(a panic value of a type the module cannot print)"
	}
	return "panic: " + s
}
