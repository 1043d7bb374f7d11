package forge

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/artifactforge/forge/registry"
	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/yaegi"
)

func warmForge(b *testing.B) *Forge {
	b.Helper()
	p := cassette(b, line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK})
	f := openForge(b, b.TempDir(), p)
	if err := f.AddRole(textContract()); err != nil {
		b.Fatal(err)
	}
	if o := f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"warm"}`)); !o.OK {
		b.Fatal(o.Err)
	}
	return f
}

var sink json.RawMessage

// BenchmarkNativeUpper is the floor: the same method compiled natively, with JSON in and out.
func BenchmarkNativeUpper(b *testing.B) {
	args := json.RawMessage(`{"s":"hello"}`)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		var in struct{ S string }
		if err := json.Unmarshal(args, &in); err != nil {
			b.Fatal(err)
		}
		out, _ := json.Marshal(strings.ToUpper(in.S))
		sink = out
	}
}

// BenchmarkSandboxWarmUpper is the sandbox's own warm call of the same artifact (no forge around
// it): the figure BenchmarkForgeCallWarm is compared with.
func BenchmarkSandboxWarmUpper(b *testing.B) {
	sb := yaegi.New(yaegi.Options{})
	defer sb.Close()
	prog, err := sb.Compile(context.Background(), sandbox.Source{Code: upperOK, Func: "upper"})
	if err != nil {
		b.Fatal(err)
	}
	in := sandbox.Input{Args: json.RawMessage(`{"s":"hello"}`), Limits: sandbox.Limits{}.WithDefaults()}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out, err := sb.Run(context.Background(), prog, in)
		if err != nil {
			b.Fatal(err)
		}
		sink = out.Value
	}
}

// BenchmarkForgeCallWarm is the whole forge.Call with a persisted artifact: role and artifact
// lookup, selection, sandbox run, metrics recorded, event queued.
func BenchmarkForgeCallWarm(b *testing.B) {
	f := warmForge(b)
	args := json.RawMessage(`{"s":"hello"}`)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		o := f.Call(ctx, "text", "upper", args)
		if !o.OK {
			b.Fatal(o.Err)
		}
		sink = o.Value
	}
}

// BenchmarkForgeCallWarmParallel is BenchmarkForgeCallWarm from every core.
func BenchmarkForgeCallWarmParallel(b *testing.B) {
	f := warmForge(b)
	args := json.RawMessage(`{"s":"hello"}`)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			if o := f.Call(ctx, "text", "upper", args); !o.OK {
				b.Error(o.Err)
				return
			}
		}
	})
}

// BenchmarkForgeCallWarmPlaced is BenchmarkForgeCallWarm on each placement a contract can get:
// the safe default (what a contract that names no sandbox runs on here), wasm, yaegi in worker
// processes (the default without a Go toolchain) and in-process yaegi (trusted code only).
func BenchmarkForgeCallWarmPlaced(b *testing.B) {
	for _, pl := range []struct{ name, def, isolation string }{
		{"default", "", ""},
		{"wasm", "wasm", ""},
		{"yaegi-process", "yaegi", sandbox.IsolationProcess},
		{"yaegi-inprocess", "yaegi", ""},
	} {
		b.Run(pl.name, func(b *testing.B) {
			p := cassette(b, line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK})
			f := openForge(b, b.TempDir(), p, func(o *Options) { o.DefaultSandbox = pl.def })
			c := textContract()
			if pl.isolation != "" {
				c.Limits = &registry.Limits{Isolation: pl.isolation}
			}
			if err := f.AddRole(c); err != nil {
				b.Fatal(err)
			}
			args := json.RawMessage(`{"s":"hello"}`)
			ctx := context.Background()
			if o := f.Call(ctx, "text", "upper", args); !o.OK {
				b.Fatal(o.Err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				o := f.Call(ctx, "text", "upper", args)
				if !o.OK {
					b.Fatal(o.Err)
				}
				sink = o.Value
			}
		})
	}
}
