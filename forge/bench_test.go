package forge

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/artifactforge/forge/registry"
	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/yaegi"
)

func warmForge(b testing.TB, mod ...func(*Options)) *Forge {
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

// eventBench is what reportEventLog compares with: the log's bytes and the process's CPU time
// when the timed loop began.
type eventBench struct {
	written int64
	cpu     time.Duration
}

func startEventBench(b *testing.B, f *Forge) eventBench {
	w := logWritten(f)
	cpu, _ := processCPU(b)
	return eventBench{written: w, cpu: cpu}
}

// reportEventLog reports, per call since start, the process's CPU time (the calls and the event
// writer together, the log flushed), the log bytes written and the lines dropped.
func reportEventLog(b *testing.B, f *Forge, start eventBench) {
	b.StopTimer()
	if f.events != nil {
		f.Flush()
	}
	if cpu, ok := processCPU(b); ok {
		b.ReportMetric(float64(cpu-start.cpu)/float64(b.N), "cpu-ns/call")
	}
	if f.events == nil {
		return
	}
	b.ReportMetric(float64(f.events.written.Load()-start.written)/float64(b.N), "logB/call")
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
			start := startEventBench(b, f)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				o := f.Call(ctx, "text", "upper", args)
				if !o.OK {
					b.Fatal(o.Err)
				}
				sink = o.Value
			}
			reportEventLog(b, f, start)
		})
	}
}

// BenchmarkForgeCallWarmParallelEvents is BenchmarkForgeCallWarmEvents from every core.
func BenchmarkForgeCallWarmParallelEvents(b *testing.B) {
	for _, m := range eventModes {
		b.Run(m.name, func(b *testing.B) {
			f := warmForge(b, m.mod)
			args := json.RawMessage(`{"s":"hello"}`)
			start := startEventBench(b, f)
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
			reportEventLog(b, f, start)
		})
	}
}

// manyStores holds, per artifact count, a store whose role "many" has that many persisted
// methods (built once per process: the benchmark function runs once per b.N it tries).
var manyStores sync.Map

func removeManyStores() {
	manyStores.Range(func(_, dir any) bool {
		os.RemoveAll(dir.(string))
		return true
	})
}

func manyStore(b *testing.B, n int) string {
	if dir, ok := manyStores.Load(n); ok {
		return dir.(string)
	}
	dir, err := os.MkdirTemp("", "forge-bench-many-")
	if err != nil {
		b.Fatal(err)
	}
	var lines []line
	c := registry.Contract{Role: "many", Purpose: "many small string methods", Methods: map[string]string{}}
	for i := range n {
		m := fmt.Sprintf("m%d", i)
		c.Methods[m] = fmt.Sprintf("func M%d(s string) string", i)
		lines = append(lines, line{Role: "many", Method: m, Kind: "generate", Attempt: 1,
			Code: fmt.Sprintf("package artifact\n\nimport \"strings\"\n\nfunc M%d(s string) string { return strings.ToUpper(s) }\n", i)})
	}
	f := openForge(b, dir, cassette(b, lines...))
	if err := f.AddRole(c); err != nil {
		b.Fatal(err)
	}
	for i := range n {
		if o := f.Call(context.Background(), "many", fmt.Sprintf("m%d", i), json.RawMessage(`{"s":"x"}`)); !o.OK {
			b.Fatal(o.Err)
		}
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	manyStores.Store(n, dir)
	return dir
}

// BenchmarkForgeCallWarmEventsMany is BenchmarkForgeCallWarmEvents over 100 persisted methods
// called round-robin: an aggregate line per artifact and interval, so the log bytes per call
// grow with the artifacts and shrink with the calls each gets per interval.
func BenchmarkForgeCallWarmEventsMany(b *testing.B) {
	const n = 100
	methods := make([]string, n)
	for i := range methods {
		methods[i] = fmt.Sprintf("m%d", i)
	}
	for _, m := range eventModes {
		b.Run(m.name, func(b *testing.B) {
			f := openForge(b, manyStore(b, n), nil, m.mod)
			args := json.RawMessage(`{"s":"hello"}`)
			ctx := context.Background()
			for range 20 { // compile each program and fill its pool before timing
				for _, meth := range methods {
					if o := f.Call(ctx, "many", meth, args); !o.OK {
						b.Fatal(o.Err)
					}
				}
			}
			runtime.GC() // the store's setup left garbage: the first mode run would pay for it
			start := startEventBench(b, f)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				o := f.Call(ctx, "many", methods[i%n], args)
				if !o.OK {
					b.Fatal(o.Err)
				}
				sink = o.Value
			}
			reportEventLog(b, f, start)
		})
	}
}
