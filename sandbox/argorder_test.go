package sandbox

import (
	"encoding/json"
	"testing"
)

// BenchmarkAppendArgs is the warm path's argument ordering (by name and by position) reusing its
// buffer: it must not allocate.
func BenchmarkAppendArgs(b *testing.B) {
	sig := Signature{Func: "F", Params: []Param{{Name: "numbers", Type: "[]float64"}, {Name: "threshold", Type: "float64"}}}
	byName := json.RawMessage(`{"numbers": [1.0, 2.0, 3.9, 4.0, 5.0, 2.2], "threshold": 0.3}`)
	byPos := json.RawMessage(`[[1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3]`)
	var buf []json.RawMessage
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = AppendArgs(buf, sig, byName)
		buf, _ = AppendArgs(buf, sig, byPos)
	}
}

// TestAppendArgsReusesItsBuffer: ordering into a buffer of the right size allocates nothing.
func TestAppendArgsReusesItsBuffer(t *testing.T) {
	sig := Signature{Func: "F", Params: []Param{{Name: "a", Type: "int"}, {Name: "b", Type: "string"}}}
	raw := json.RawMessage(`{"b": "x", "a": 1}`)
	buf := make([]json.RawMessage, 0, 2)
	allocs := testing.AllocsPerRun(100, func() {
		out, err := AppendArgs(buf, sig, raw)
		if err != nil || len(out) != 2 || string(out[0]) != "1" || string(out[1]) != `"x"` {
			t.Fatalf("AppendArgs = %q, %v", out, err)
		}
	})
	if allocs != 0 {
		t.Fatalf("AppendArgs allocated %v times per call with a large enough buffer", allocs)
	}
}
