package difftest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/sandboxtest"
)

// TestNativeAgreesWithWasm: sandbox/native answers the compute benchmarks and the warm-call
// programs as wasm does (both build the artifact with the same generated dispatcher, so the
// answers are byte-identical, not only equal as JSON).
func TestNativeAgreesWithWasm(t *testing.T) {
	if nat == nil {
		t.Skip("sandbox/native cannot run here")
	}
	if testing.Short() {
		t.Skip("builds a wasm module and a native worker per program")
	}
	type prog struct{ name, code, args string }
	var progs []prog
	for _, c := range sandboxtest.ComputeCases {
		progs = append(progs, prog{c.Name, c.Code, c.Args})
	}
	for _, bp := range benchPrograms {
		progs = append(progs, prog{bp.name, bp.code, bp.args})
	}
	ctx := context.Background()
	lim := sandbox.Limits{Timeout: hangBound}
	for _, p := range progs {
		t.Run(p.name, func(t *testing.T) {
			var got [2]string
			for i, sb := range []sandbox.Sandbox{oracle, nat} {
				prog, err := sb.Compile(ctx, sandbox.Source{Code: p.code, Limits: lim})
				if err != nil {
					t.Fatal(err)
				}
				out, err := sb.Run(ctx, prog, sandbox.Input{Args: json.RawMessage(p.args), Limits: lim})
				prog.Close()
				if err != nil {
					t.Fatal(err)
				}
				got[i] = string(out.Value)
			}
			if got[0] != got[1] {
				t.Errorf("native answered %s, wasm %s", got[1], got[0])
			}
		})
	}
}
