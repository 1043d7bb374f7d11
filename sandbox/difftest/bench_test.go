package difftest

import (
	"context"
	"testing"

	"github.com/artifactforge/forge/sandbox"
)

// benchPrograms are the warm calls compared across placements: a call that does nothing but
// cross the boundary (Add), and one that computes (a loop of a few thousand steps).
var benchPrograms = []struct{ name, code, args, want string }{
	{"add", "package artifact\n\nfunc Add(a, b int) int { return a + b }\n", "[1, 2]", "3"},
	{"loop", "package artifact\n\nfunc Collatz(n int) int {\n\tsteps := 0\n\tfor i := 1; i <= n; i++ {\n\t\tfor x := i; x != 1; steps++ {\n\t\t\tif x%2 == 0 {\n\t\t\t\tx /= 2\n\t\t\t} else {\n\t\t\t\tx = 3*x + 1\n\t\t\t}\n\t\t}\n\t}\n\treturn steps\n}\n", "[100]", "3142"},
}

// BenchmarkWarmCall measures one warm call (compiled program, JSON args in, JSON result out) on
// wasm, yaegi in-process, yaegi in a worker process and sandbox/native, on the same programs in the
// same run.
func BenchmarkWarmCall(b *testing.B) {
	for _, bp := range benchPrograms {
		for _, pl := range []struct {
			name      string
			sb        sandbox.Sandbox
			isolation string
		}{{"wasm", oracle, ""}, {"yaegi_inprocess", interp, sandbox.IsolationNone}, {"yaegi_worker", interp, sandbox.IsolationProcess}, {"native", nat, ""}} {
			b.Run(bp.name+"/"+pl.name, func(b *testing.B) {
				if pl.name == "native" && nat == nil {
					b.Skip("sandbox/native cannot run here")
				}
				ctx := context.Background()
				lim := sandbox.Limits{Isolation: pl.isolation}
				p, err := pl.sb.Compile(ctx, sandbox.Source{Code: bp.code, Limits: lim})
				if err != nil {
					b.Fatal(err)
				}
				defer p.Close()
				in := sandbox.Input{Args: []byte(bp.args), Limits: lim}
				b.ReportAllocs()
				for b.Loop() {
					out, err := pl.sb.Run(ctx, p, in)
					if err != nil || string(out.Value) != bp.want {
						b.Fatal(string(out.Value), err)
					}
				}
			})
		}
	}
}
