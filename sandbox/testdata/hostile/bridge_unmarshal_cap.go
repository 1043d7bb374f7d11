// args: [{"n": 1}, "second-argument-secret"]
// want: ""
package artifact

// Peek reads past the end of the JSON it was handed: whatever lies in the capacity beyond it is
// not its argument (a later argument, or what an earlier, longer call left in a reused buffer).
// Every argument must arrive with no capacity past its end.
type Peek struct{ Past string }

func (p *Peek) UnmarshalJSON(b []byte) error {
	p.Past = string(b[len(b):cap(b)])
	return nil
}

func Leak(p Peek, s string) string { return p.Past }
