package lean

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/artifactforge/forge/sandbox"
)

// sameAsJSON checks that enc gives json.Marshal's bytes for v, or, where json.Marshal refuses v,
// json's own error text.
func sameAsJSON[T any](t *testing.T, enc Encoder[T], v T) {
	t.Helper()
	want, werr := json.Marshal(v)
	got, bad := enc(nil, v)
	if werr != nil {
		var uv *json.UnsupportedValueError
		if !errors.As(werr, &uv) {
			t.Fatalf("json.Marshal(%#v): unexpected error %v", v, werr)
		}
		if bad == "" || "json: unsupported value: "+bad != werr.Error() {
			t.Errorf("encode %#v: lean says %q, json says %v", v, bad, werr)
		}
		return
	}
	if bad != "" || string(got) != string(want) {
		t.Errorf("encode %#v:\n lean %s (%q)\n json %s", v, got, bad, want)
	}
}

var floats = []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1.5, 1e-6, 1e-7, 9.999999e-7, 1e20, 1e21, 1.2345e21, 123456789,
	1e300, 5e-324, math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, 3.0, 2.5e-10, -2.5e-10, 1 / 3.0,
	math.NaN(), math.Inf(1), math.Inf(-1), 100, 1e6, 1e-5, 123.456e-8}

var strs = []string{"", "a", "hello world", `"quoted"`, `back\slash`, "<b>&amp;</b>", "tab\tnl\ncr\r", "\b\f", "\x00\x01\x1f\x7f",
	"héllo", "日本語", "emoji 😀", "\u2028\u2029", "bad \xff utf8", "\xed\xa0\x80", "\xc3", "a\u0000b", "/slash/", "'single'"}

func TestEncodeSameAsJSON(t *testing.T) {
	for _, f := range floats {
		sameAsJSON(t, AppendFloat, f)
	}
	for _, s := range strs {
		sameAsJSON(t, AppendString, s)
	}
	for _, n := range []int{0, 1, -1, math.MaxInt, math.MinInt, 42} {
		sameAsJSON(t, AppendInt[int], n)
		sameAsJSON(t, AppendInt[int64], int64(n))
	}
	sameAsJSON(t, AppendBool, true)
	sameAsJSON(t, AppendBool, false)
	sameAsJSON(t, EncSlice(AppendInt[int]), nil)
	sameAsJSON(t, EncSlice(AppendInt[int]), []int{})
	sameAsJSON(t, EncSlice(AppendInt[int]), []int{1, -2, 3})
	sameAsJSON(t, EncSlice(AppendFloat), []float64{1, math.NaN()})
	sameAsJSON(t, EncSlice(AppendFloat), []float64{1.5, 1e-9})
	sameAsJSON(t, EncSlice(AppendString), strs)
	sameAsJSON(t, EncSlice(EncSlice(AppendInt[int])), [][]int{{1}, nil, {}, {2, 3}})
	sameAsJSON(t, EncMap(AppendInt[int]), nil)
	sameAsJSON(t, EncMap(AppendInt[int]), map[string]int{})
	sameAsJSON(t, EncMap(AppendInt[int]), map[string]int{"b": 2, "a": 1, "<&>": 3, "é": 4, "A": 5, "": 6})
	sameAsJSON(t, EncMap(EncSlice(AppendString)), map[string][]string{"x": {"<"}, "y": nil})
	sameAsJSON(t, EncMap(AppendFloat), map[string]float64{"a": 1, "b": math.Inf(1)})
	arr := [3]int{1, 2, 3}
	got, _ := EncArray(AppendInt[int])(nil, arr[:])
	want, _ := json.Marshal(arr)
	if string(got) != string(want) {
		t.Errorf("array: %s, json %s", got, want)
	}
	var zero [0]float64
	got, _ = EncArray(AppendFloat)(nil, zero[:])
	want, _ = json.Marshal(zero)
	if string(got) != string(want) {
		t.Errorf("empty array: %s, json %s", got, want)
	}
}

// sameDecode checks the decoder's contract on raw: if it accepts, encoding/json (through
// sandbox.UnmarshalArg, the guest's other decoder) accepts too and gives the same value, nil
// and empty told apart; json.Marshal's encoding of any value json decodes is always accepted.
func sameDecode[T any](t *testing.T, dec Decoder[T], raw string) (accepted bool) {
	t.Helper()
	got, ok := Decode([]byte(raw), dec)
	var want T
	werr := sandbox.UnmarshalArg([]byte(raw), &want)
	if ok {
		if werr != nil {
			t.Errorf("decode %T %q: lean accepts (%#v), json refuses: %v", want, raw, got, werr)
		} else if !reflect.DeepEqual(got, want) {
			t.Errorf("decode %T %q: lean %#v, json %#v", want, raw, got, want)
		}
	}
	if werr == nil {
		canon, err := json.Marshal(want)
		if err != nil {
			t.Fatalf("json.Marshal(%#v): %v", want, err)
		}
		again, ok := Decode(canon, dec)
		if !ok || !reflect.DeepEqual(again, want) {
			t.Errorf("decode %T of json.Marshal's %s: lean %#v (accepted %v), want %#v", want, canon, again, ok, want)
		}
	}
	return ok
}

func TestDecodeSameAsJSON(t *testing.T) {
	ints := []string{"0", "-0", "1", "-1", "42", " 7 ", "\t\n7\r", "999999999999999999", "-999999999999999999",
		"9223372036854775807", "9223372036854775808", "-9223372036854775808", "1.0", "1e2", "01", "+1", "--1", "1 2",
		"", "null", `"1"`, "true", "1x", "0x10", "1_000", "[1]", "-", "1.", ".5"}
	for _, r := range ints {
		sameDecode(t, Int[int], r)
		sameDecode(t, Int[int64], r)
	}
	for _, r := range []string{"0", "-0", "0.5", "1e2", "1E+2", "1e-400", "1e400", "-1e400", "123.456", "1.", ".5", "1e", "1e+",
		"NaN", "Infinity", "null", "01.5", "2.5e-10", "17976931348623157e292", `"1"`, "0.0000001"} {
		sameDecode(t, Float, r)
	}
	for _, r := range []string{"true", "false", "null", "True", "1", "truex", " true "} {
		sameDecode(t, Bool, r)
	}
	for _, r := range []string{`""`, `"a"`, `"a\"b"`, `"\\"`, `"\/"`, `"\b\f\n\r\t"`, `"\u0041"`, `"\u00e9"`, `"\u00E9"`,
		`"\ud83d\ude00"`, `"\ud800"`, `"\udfff"`, `"\u12"`, `"\u12g4"`, `"\x"`, "\"raw\ttab\"", "\"bad \xff\"", `"héllo"`,
		`"日本"`, `"unterminated`, `"a"b`, `null`, `1`, `"\u2028"`, `"<&>"`, "\"\x7f\"", `"\u0000"`} {
		sameDecode(t, String, r)
	}
	for _, r := range []string{"[]", "null", "[1,2,3]", " [ 1 , 2 ] ", "[1,]", "[,1]", "[1 2]", "[", "[1", "[null]", `["1"]`,
		"[1.5]", "[[1]]", "{}"} {
		sameDecode(t, Slice(Int[int]), r)
	}
	for _, r := range []string{"[[1],[],null,[2,3]]", "[]", "[[]]", "[[1],2]", "null"} {
		sameDecode(t, Slice(Slice(Int[int])), r)
	}
	for _, r := range []string{`["a","b"]`, `["\u003c"]`, `[null]`, `["a",1]`} {
		sameDecode(t, Slice(String), r)
	}
	for _, r := range []string{`{}`, `null`, `{"a":1}`, `{"a":1,"a":2}`, ` { "a" : 1 , "b" : 2 } `, `{"a":1,}`, `{a:1}`,
		`{"a" 1}`, `{"a":"1"}`, `{"\u00e9":1}`, `{"a":null}`, `[]`, `{"a":1`, `{null:1}`, `{1:1}`} {
		sameDecode(t, Map(Int[int]), r)
	}
	sameDecode(t, Map(Slice(Float)), `{"x":[1.5,2],"y":[]}`)
	sameDecode(t, Map(String), `{"x":null,"y":"s"}`)
	sameDecode(t, Slice(Bool), `[true,null,false]`)
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{`[1,2]`, `"a\u00e9"`, `{"a":[1.5]}`, `-0`, `1e5`, `true`, `null`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		sameDecode(t, Int[int], raw)
		sameDecode(t, Float, raw)
		sameDecode(t, String, raw)
		sameDecode(t, Bool, raw)
		sameDecode(t, Slice(Int[int64]), raw)
		sameDecode(t, Map(Slice(String)), raw)
		sameDecode(t, Slice(Slice(Float)), raw)
	})
}

func FuzzEncode(f *testing.F) {
	f.Add("a<b>", 1.5, int64(3))
	f.Add("\xff\u2028", math.Inf(1), int64(-1))
	f.Fuzz(func(t *testing.T, s string, x float64, n int64) {
		sameAsJSON(t, AppendString, s)
		sameAsJSON(t, AppendFloat, x)
		sameAsJSON(t, AppendInt[int64], n)
		sameAsJSON(t, EncMap(EncSlice(AppendFloat)), map[string][]float64{s: {x, float64(n)}, "k": nil})
	})
}

func TestCapSameAsSandbox(t *testing.T) {
	if MaxErrorBytes != sandbox.MaxErrorBytes || capBefore+"%d"+capAfter != sandbox.CapMarker {
		t.Fatalf("lean's cap (%d, %q) differs from sandbox's (%d, %q)", MaxErrorBytes, capBefore+"%d"+capAfter, sandbox.MaxErrorBytes, sandbox.CapMarker)
	}
	for _, s := range []string{"", "short", strings.Repeat("x", MaxErrorBytes), strings.Repeat("x", MaxErrorBytes+1),
		strings.Repeat("é", MaxErrorBytes), strings.Repeat("日", 3000), strings.Repeat("a", MaxErrorBytes-1) + "😀😀"} {
		if got, want := Cap(s), sandbox.CapMessage(s); got != want {
			t.Errorf("Cap of %d bytes: %q..., want %q...", len(s), got[max(0, len(got)-40):], want[max(0, len(want)-40):])
		}
	}
}

// TestFailDecodesAsSandboxError: the host reads Fail's JSON into a sandbox.Error.
func TestFailDecodesAsSandboxError(t *testing.T) {
	for _, c := range []sandbox.Error{
		{Kind: "panic", Message: "panic: <oops> & \"quotes\"\n\xff", Line: 12},
		{Kind: "args", Message: "want int: json: cannot unmarshal string into Go value of type int", Param: "n"},
		{Kind: "result", Message: "encode float64 result: json: unsupported value: NaN", Hint: "return JSON-encodable values"},
		{Kind: "returned", Message: strings.Repeat("long ", 2000)},
	} {
		out := Fail(string(c.Kind), c.Message, c.Hint, c.Param, c.Line)
		if out[0] != 'e' {
			t.Fatalf("tag %q", out[0])
		}
		var got sandbox.Error
		if err := json.Unmarshal(out[1:], &got); err != nil {
			t.Fatalf("%s: %v", out, err)
		}
		want := c
		want.Message = sandbox.CapMessage(strings.ToValidUTF8(c.Message, "\ufffd"))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Fail(%+v) decodes as %+v", c, got)
		}
	}
}

type stringer struct{}

func (stringer) String() string { return "a stringer" }

// TestPanicTextSameAsFmt: PanicText formats the values a module without fmt can panic with as
// fmt.Sprint does.
func TestPanicTextSameAsFmt(t *testing.T) {
	vals := []any{"msg", errors.New("an error"), stringer{}, 42, int8(-3), uint64(1 << 63), 1.5, float32(0.1), 1e21, true,
		uintptr(7), math.NaN()}
	for _, f := range []func(){
		func() { var s []int; _ = s[3] },
		//lint:ignore SA5000 the panic of a nil map assignment is what is compared
		func() { var m map[string]int; m["a"] = 1 },
		func() { var x any = "s"; _ = x.(int) },
		func() { a, b := 1, 0; _ = a / b },
		func() { _ = strings.Repeat("x", -1) },
		func() { var p *struct{ x int }; _ = p.x },
		func() { panic(nil) },
		func() { _ = utf8.RuneLen(0); panic(fmt.Errorf("wrapped: %w", errors.New("inner"))) },
	} {
		vals = append(vals, recovered(f))
	}
	for _, v := range vals {
		if got, want := PanicText(v), fmt.Sprint("panic: ", v); got != want {
			t.Errorf("PanicText(%T) = %q, fmt says %q", v, got, want)
		}
	}
}

func recovered(f func()) (r any) {
	defer func() { r = recover() }()
	f()
	return nil
}
