package sandbox

import (
	"encoding/json"
	"strings"
	"testing"
)

// argCheckSource declares every kind of place the check knows: scalars, a struct, a pointer, a
// slice, a map, an any, a fixed-size array, a time.
const argCheckSource = "package artifact\n\nimport \"time\"\n\n" +
	"type P struct {\n\tX int `json:\"x\"`\n\tName string\n\tNext *P `json:\"next\"`\n\tTags []string `json:\"tags\"`\n}\n\n" +
	"func F(c int, s string, p P, ptr *int, xs []int, m map[string]int, a any, arr [2]int, when time.Time, ps []*int, b []byte) int { return 0 }\n"

func argCheckArgs(over map[string]string) json.RawMessage {
	args := map[string]string{"c": "1", "s": `"s"`, "p": `{"x":1,"Name":"n","next":null,"tags":null}`, "ptr": "2", "xs": "[1,2]",
		"m": `{"a":1}`, "a": "null", "arr": "[1,2]", "when": `"2026-01-02T03:04:05Z"`, "ps": "[1,null]", "b": `"AQI="`}
	for k, v := range over {
		args[k] = v
	}
	obj := map[string]json.RawMessage{}
	for k, v := range args {
		obj[k] = json.RawMessage(v)
	}
	raw, _ := json.Marshal(obj)
	return raw
}

// Issue 23 item 3: a null where the parameter's schema has no null (and a fixed-size array of
// the wrong length) is a KindArgs error naming the parameter and the place, by name and by
// position; a null where the schema allows one (pointer, slice, map, any) is a value.
func TestAppendArgsChecksNullsAgainstTheSchema(t *testing.T) {
	sig, err := ParseSignature(Source{Code: argCheckSource})
	if err != nil {
		t.Fatal(err)
	}
	ok := []map[string]string{
		nil,
		{"ptr": "null"}, {"xs": "null"}, {"m": "null"}, {"a": "null"}, {"b": "null"}, {"ps": "null"},
		{"p": `{"x":1,"next":{"x":2,"next":null}}`}, {"p": `{"X":3}`}, {"m": `{}`}, {"xs": "[]"},
		{"s": `"null"`}, {"p": `{"Name":"null"}`}, // the word inside a string is no null
	}
	for _, o := range ok {
		if _, err := OrderArgs(sig, argCheckArgs(o)); err != nil {
			t.Errorf("%v: %v", o, err)
		}
	}
	bad := []struct {
		over        map[string]string
		param, text string
	}{
		{map[string]string{"c": "null"}, "c", "got null for c int"},
		{map[string]string{"s": "null"}, "s", "got null for s string"},
		{map[string]string{"p": "null"}, "p", "got null for p P"},
		{map[string]string{"when": "null"}, "when", "got null for when time.Time"},
		{map[string]string{"arr": "null"}, "arr", "got null for arr [2]int"},
		{map[string]string{"xs": "[1,null]"}, "xs", "got null at xs[1]"},
		{map[string]string{"m": `{"a":null}`}, "m", `got null at m["a"]`},
		{map[string]string{"p": `{"x":null}`}, "p", "got null at p.x"},
		{map[string]string{"p": `{"X":null}`}, "p", "got null at p.X"},
		{map[string]string{"p": `{"tags":["a",null]}`}, "p", "got null at p.tags[1]"},
		{map[string]string{"arr": "[1]"}, "arr", "got 1 element(s) at arr, which takes exactly 2"},
		{map[string]string{"arr": "[1,2,3]"}, "arr", "got 3 element(s) at arr, which takes exactly 2"},
		{map[string]string{"arr": "[1,null]"}, "arr", "got null at arr[1]"},
	}
	for _, b := range bad {
		_, err := OrderArgs(sig, argCheckArgs(b.over))
		se, _ := err.(*Error)
		if se == nil || se.Kind != KindArgs || se.Param != b.param || !strings.Contains(se.Message, b.text) {
			t.Errorf("%v: got %v, want a KindArgs error for %s saying %q", b.over, err, b.param, b.text)
		}
	}
	// By position too, and a bare value for a one-parameter function.
	if _, err := OrderArgs(sig, json.RawMessage(`[null,"s",{},null,null,null,null,[1,2],"2026-01-02T03:04:05Z",null,null]`)); KindOf(err) != KindArgs || err.(*Error).Param != "c" {
		t.Errorf("positional null: %v", err)
	}
	one, err := ParseSignature(Source{Code: "package artifact\n\nfunc G(xs []int) int { return 0 }\n"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OrderArgs(one, json.RawMessage(`[1, null]`)); KindOf(err) != KindArgs {
		t.Errorf("bare [1, null] for xs []int: %v", err)
	}
	v, err := ParseSignature(Source{Code: "package artifact\n\nfunc V(sep string, xs ...int) int { return 0 }\n"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OrderArgs(v, json.RawMessage(`["-", 1, null]`)); KindOf(err) != KindArgs || err.(*Error).Param != "xs" {
		t.Errorf("variadic null element: %v", err)
	}
	if _, err := OrderArgs(v, json.RawMessage(`["-"]`)); err != nil {
		t.Errorf("omitted variadic: %v", err)
	}
}

// The check stays off the allocator on the warm path: args without a null, in a signature with
// nested places that refuse null, are ordered and checked with no allocation.
func TestAppendArgsCheckDoesNotAllocate(t *testing.T) {
	sig, err := ParseSignature(Source{Code: "package artifact\n\ntype P struct{ X int }\n\nfunc F(c int, s string, p P, xs []int, arr [2]int) int { return 0 }\n"})
	if err != nil {
		t.Fatal(err)
	}
	raw := json.RawMessage(`{"c": 1, "s": "x", "p": {"X": 2}, "xs": [1, 2, 3], "arr": [4, 5]}`)
	buf := make([]json.RawMessage, 0, 5)
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := AppendArgs(buf, sig, raw); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("AppendArgs with its check allocated %v times per call", allocs)
	}
}

// The schema says what the decoders enforce: an integer type's range, and null for []byte.
func TestParamsSchemaPublishesIntegerRanges(t *testing.T) {
	sig, err := ParseSignature(Source{Code: "package artifact\n\nfunc F(a int8, b uint, c uint16, d rune, e byte, f []byte, g float32) int { return 0 }\n"})
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties map[string]map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(sig.ParamsSchema, &schema); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][2]float64{"a": {-128, 127}, "b": {0, 18446744073709551615}, "c": {0, 65535}, "d": {-2147483648, 2147483647}, "e": {0, 255}} {
		p := schema.Properties[name]
		if p["type"] != "integer" || p["minimum"] != want[0] || p["maximum"] != want[1] {
			t.Errorf("%s: %v, want integer %v..%v", name, p, want[0], want[1])
		}
	}
	if ty, _ := json.Marshal(schema.Properties["f"]["type"]); string(ty) != `["string","null"]` {
		t.Errorf("[]byte: %v", schema.Properties["f"])
	}
	if schema.Properties["g"]["maximum"] == nil {
		t.Errorf("float32: %v", schema.Properties["g"])
	}
}

// BenchmarkAppendArgsCheck is the warm path's ordering of BenchmarkAppendArgs's args with and
// without the schema check, in one run (the difference is the check's cost).
func BenchmarkAppendArgsCheck(b *testing.B) {
	checked, err := ParseSignature(Source{Code: "package artifact\n\nfunc F(numbers []float64, threshold float64) bool { return false }\n"})
	if err != nil {
		b.Fatal(err)
	}
	unchecked := Signature{Func: checked.Func, Params: checked.Params, Shape: checked.Shape, Result: checked.Result}
	byName := json.RawMessage(`{"numbers": [1.0, 2.0, 3.9, 4.0, 5.0, 2.2], "threshold": 0.3}`)
	for _, c := range []struct {
		name string
		sig  Signature
	}{{"unchecked", unchecked}, {"checked", checked}} {
		b.Run(c.name, func(b *testing.B) {
			var buf []json.RawMessage
			b.ReportAllocs()
			for b.Loop() {
				buf, _ = AppendArgs(buf, c.sig, byName)
			}
		})
	}
}
