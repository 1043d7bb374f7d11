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

func warmForge(b *testing.B, mod ...func(*Options)) *Forge {
	b.Helper()
	p := cassette(b, line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK})
	f := openForge(b, b.TempDir(), p, mod...)
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

// eventModes are the event log's modes the warm-path benchmarks compare in one run.
var eventModes = []struct {
	name string
	mod  func(*Options)
}{
	{"aggregate", func(*Options) {}},
	{"percall", func(o *Options) { o.EventsPerCall = true }},
	{"off", func(o *Options) { o.NoEvents = true }},
}

// reportEventLog reports the log bytes written per call since before (flushing first) and the
// lines dropped per call.
func reportEventLog(b *testing.B, f *Forge, before int64) {
	b.StopTimer()
	if f.events == nil {
		return
	}
	f.Flush()
	b.ReportMetric(float64(f.events.written.Load()-before)/float64(b.N), "logB/call")
	b.ReportMetric(float64(f.Health().EventsDropped)/float64(b.N), "dropped/call")
}

func logWritten(f *Forge) int64 {
	if f.events == nil {
		return 0
	}
	f.Flush()
	return f.events.written.Load()
}

// BenchmarkForgeCallWarmEvents is BenchmarkForgeCallWarm with the event log aggregating warm
// successes (the default), writing one line per call, and off, with the log bytes per call.
func BenchmarkForgeCallWarmEvents(b *testing.B) {
	for _, m := range eventModes {
		b.Run(m.name, func(b *testing.B) {
			f := warmForge(b, m.mod)
			args := json.RawMessage(`{"s":"hello"}`)
			ctx := context.Background()
			before := logWritten(f)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				o := f.Call(ctx, "text", "upper", args)
				if !o.OK {
					b.Fatal(o.Err)
				}
				sink = o.Value
			}
			reportEventLog(b, f, before)
		})
	}
}

// BenchmarkForgeCallWarmParallelEvents is BenchmarkForgeCallWarmEvents from every core.
func BenchmarkForgeCallWarmParallelEvents(b *testing.B) {
	for _, m := range eventModes {
		b.Run(m.name, func(b *testing.B) {
			f := warmForge(b, m.mod)
			args := json.RawMessage(`{"s":"hello"}`)
			before := logWritten(f)
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
			reportEventLog(b, f, before)
		})
	}
}
