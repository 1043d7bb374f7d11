package wasm

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/sandboxtest"
)

const benchCode = `package artifact

func Add(a, b int) int { return a + b }
`

var benchArgs = json.RawMessage(`[1, 2]`)

func benchProgram(b *testing.B, sb *Sandbox, code string) *Program {
	b.Helper()
	p, err := sb.Compile(context.Background(), sandbox.Source{Code: code})
	if err != nil {
		b.Fatal(err)
	}
	return p.(*Program)
}

// BenchmarkWasmWarmCall is the persisted-artifact path: JSON args in, JSON result out, pooled
// instance, deadline per call.
func BenchmarkWasmWarmCall(b *testing.B) {
	p := benchProgram(b, shared, benchCode)
	ctx := context.Background()
	in := sandbox.Input{Args: benchArgs}
	b.ReportAllocs()
	for b.Loop() {
		out, err := shared.Run(ctx, p, in)
		if err != nil || string(out.Value) != "3" {
			b.Fatal(string(out.Value), err)
		}
	}
}

// BenchmarkWasmWarmCallParallel is BenchmarkWasmWarmCall from GOMAXPROCS goroutines at once (one
// instance per goroutine from the pool).
func BenchmarkWasmWarmCallParallel(b *testing.B) {
	p := benchProgram(b, shared, benchCode)
	ctx := context.Background()
	in := sandbox.Input{Args: benchArgs}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			out, err := shared.Run(ctx, p, in)
			if err != nil || string(out.Value) != "3" {
				b.Error(string(out.Value), err)
				return
			}
		}
	})
}

// BenchmarkWasmColdLoad is a process that finds the module in the cache: new sandbox (runtime),
// module from the build cache, compiled code from wazero's on-disk cache, instantiate, first answer.
func BenchmarkWasmColdLoad(b *testing.B) {
	benchProgram(b, shared, benchCode) // make sure both caches are warm
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		sb, err := New(Options{CacheDir: testCacheDir})
		if err != nil {
			b.Fatal(err)
		}
		p, err := sb.Compile(ctx, sandbox.Source{Code: benchCode})
		if err != nil {
			b.Fatal(err)
		}
		out, err := sb.Run(ctx, p, sandbox.Input{Args: benchArgs})
		if err != nil || string(out.Value) != "3" {
			b.Fatal(string(out.Value), err)
		}
		sb.Close()
	}
}

// BenchmarkComputeNative and BenchmarkComputeWasm are the compute benchmarks
// (sandboxtest.ComputeCases): the same function compiled by Go, and called in the sandbox (JSON in
// and out, pooled instance, deadline). sandbox/yaegi's BenchmarkComputeYaegi runs them interpreted;
// `make bench` puts the three side by side (internal/benchtable).
func BenchmarkComputeNative(b *testing.B) {
	for _, c := range sandboxtest.ComputeCases {
		b.Run(c.Name, func(b *testing.B) {
			b.ReportAllocs()
			cpu := sandboxtest.StartCPU()
			for b.Loop() {
				if strconv.Itoa(c.Native(c.N)) != c.Want {
					b.Fatal("wrong")
				}
			}
			cpu.Stop(b)
		})
	}
}

func BenchmarkComputeWasm(b *testing.B) {
	for _, c := range sandboxtest.ComputeCases {
		b.Run(c.Name, func(b *testing.B) {
			p := benchProgram(b, shared, c.Code)
			in := sandbox.Input{Args: json.RawMessage(c.Args)}
			b.ReportAllocs()
			cpu := sandboxtest.StartCPU()
			for b.Loop() {
				out, err := shared.Run(context.Background(), p, in)
				if err != nil || string(out.Value) != c.Want {
					b.Fatal(string(out.Value), err)
				}
			}
			cpu.Stop(b)
		})
	}
}

// BenchmarkTermination measures what it costs to be able to stop runaway guest code, on fib(27):
// none (the unsafe floor: code cannot be stopped), wazero's WithCloseOnContextDone (an exit to Go
// at every loop header), and the sandbox's fuel instrumentation (a decrement at every loop header,
// a Go call every fuelPerTick of them). See RATIONALE.md, "Stopping runaway wasm code".
func BenchmarkTermination(b *testing.B) {
	ctx := context.Background()
	tc, err := shared.builder.toolchain()
	if err != nil {
		b.Skip(err)
	}
	src := sandbox.Source{Code: sandboxtest.FibCode}
	code, _, _ := gateCode(src.Code, false, nil)
	sig, err := sandbox.ParseSignature(sandbox.Source{Code: code})
	if err != nil {
		b.Fatal(err)
	}
	raw, err := shared.builder.goBuildRaw(ctx, tc, callGuest(code, sig))
	if err != nil {
		b.Fatal(err)
	}
	instrumented, err := instrumentFuel(raw)
	if err != nil {
		b.Fatal(err)
	}
	args := []json.RawMessage{json.RawMessage("27")}
	lim := sandbox.Limits{}.WithDefaults()
	for _, c := range []struct {
		name        string
		bin         []byte
		closeOnDone bool
	}{
		{"none", raw, false},
		{"closeOnContextDone", raw, true},
		{"fuel", instrumented, false},
	} {
		b.Run(c.name, func(b *testing.B) {
			cache, err := wazero.NewCompilationCacheWithDir(testCacheDir + "/wasm/compiled")
			if err != nil {
				b.Fatal(err)
			}
			eng, err := newEngine(ctx, cache, pagesFor(lim.MemoryBytes), c.closeOnDone, false)
			if err != nil {
				b.Fatal(err)
			}
			defer eng.rt.Close(ctx)
			cm, err := eng.rt.CompileModule(ctx, c.bin)
			if err != nil {
				b.Fatal(err)
			}
			inst, err := newInstance(ctx, eng, cm, false)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				cctx, cancel := context.WithTimeout(ctx, lim.Timeout)
				v, err := inst.call(cctx, sandbox.NewHost(cctx, sandbox.Input{}), args, lim)
				cancel()
				if err != nil || string(v) != "196418" {
					b.Fatal(string(v), err)
				}
			}
		})
	}
}

// BenchmarkNewMethod is a new method on a machine whose caches are warm (issue 25): code the
// module cache has never seen is built (go build, fuel instrumentation), compiled by wazero and
// answers its first call. It reports the median (p50-ms) besides the mean; model time is not in it.
func BenchmarkNewMethod(b *testing.B) {
	benchProgram(b, shared, benchCode) // the toolchain's wasip1 standard library is warm
	ctx := context.Background()
	nonce := time.Now().UnixNano()
	var took []time.Duration
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		code := fmt.Sprintf("package artifact\n\nimport \"strings\"\n\n// nonce %d-%d\nfunc Upper(s string) string { return strings.ToUpper(s) }\n", nonce, i)
		start := time.Now()
		p, err := shared.Compile(ctx, sandbox.Source{Code: code})
		if err != nil {
			b.Fatal(err)
		}
		out, err := shared.Run(ctx, p, sandbox.Input{Args: json.RawMessage(`["new"]`)})
		if err != nil || string(out.Value) != `"NEW"` {
			b.Fatal(string(out.Value), err)
		}
		took = append(took, time.Since(start))
		p.Close()
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2])/1e6, "p50-ms")
}
