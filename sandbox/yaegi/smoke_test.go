package yaegi

import (
	"context"
	"encoding/json"
	"testing"
)

func TestSmoke(t *testing.T) {
	s := New(Options{})
	ctx := context.Background()
	for _, c := range []struct{ code, args string }{
		{"import \"math\"\nfunc HasCloseElements(numbers []float64, threshold float64) bool {\nfor i := 0; i < len(numbers); i++ { for j := i+1; j < len(numbers); j++ { if math.Abs(numbers[i]-numbers[j]) < threshold { return true } } }\nreturn false\n}", `[[1,2,3.1,3], 0.5]`},
		{"package artifact\nfunc Fib(n int) int { if n < 2 { return n }; return Fib(n-1) + Fib(n-2) }", `{"n": 20}`},
		{"package artifact\nfunc Deep(n int) int { return Deep(n+1) + 1 }", `{"n": 1}`},
		{"package artifact\nfunc Loop(n int) int { for { n++ } }", `{"n": 1}`},
		{"package artifact\nimport \"slices\"\nfunc S(xs []int) []int { slices.Sort(xs); var fs []func() int; for i := range 3 { fs = append(fs, func() int { return i }) }; return append(xs, min(fs[0](), fs[1](), fs[2]()), max(len(xs), 7)) }", `[[3,1,2]]`},
		{"package artifact\ntype P struct { X int `json:\"x\"`; Name string }\nfunc F(p P, q *P) (P, error) { p.X += q.X; return p, nil }", `[{"x":1,"Name":"a"},{"x":2}]`},
		{"package artifact\nfunc F(p int) int { return p }", `["abc"]`},
		{"package artifact\nimport \"os\"\nfunc F(p int) int { os.Exit(1); return p }", `[1]`},
	} {
		p, err := s.Compile(ctx, sandboxSource(c.code))
		if err != nil {
			t.Logf("compile: %v", err)
			continue
		}
		out, err := s.Run(ctx, p, sandboxInput(c.args))
		t.Logf("%s -> %s %v (%v)", p.Signature().Func, out.Value, err, out.Duration)
		_ = json.Valid
	}
}
