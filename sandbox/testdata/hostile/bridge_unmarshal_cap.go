// args: [{"n": 1}, "second-argument-secret"]
// want: "called; past the end: "
// backends: wasm
package artifact

// Peek reads past the end of the JSON it was handed: whatever lies in the capacity beyond it is
// not its argument (a later argument, or what an earlier, longer call left in a reused buffer).
// Every argument must arrive with no capacity past its end. (wasm only: yaegi v0.16.1 does not
// call UnmarshalJSON methods of interpreted types from encoding/json, so the method never runs.)
type Peek struct{ Past string }

func (p *Peek) UnmarshalJSON(b []byte) error {
	p.Past = "called; past the end: " + string(b[len(b):cap(b)])
	return nil
}

func Leak(p Peek, s string) string { return p.Past }
