package yaegi

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/sandboxtest"
)

const benchCode = `package artifact

func Add(a, b int) int { return a + b }
`

var benchArgs = json.RawMessage(`[1, 2]`)

// nativeAdd is benchCode compiled by Go: the floor the interpreter is measured against.
func nativeAdd(a, b int) int { return a + b }

// BenchmarkNativeCall does the same work as a warm call natively: decode JSON args, call, encode.
func BenchmarkNativeCall(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		var args [2]int
		if err := json.Unmarshal(benchArgs, &args); err != nil {
			b.Fatal(err)
		}
		out, err := json.Marshal(nativeAdd(args[0], args[1]))
		if err != nil || string(out) != "3" {
			b.Fatal(string(out), err)
		}
	}
}

func benchProgram(b *testing.B, sb *Sandbox) sandbox.Program {
	p, err := sb.Compile(context.Background(), sandbox.Source{Code: benchCode})
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkWarmCall is the persisted-artifact path: JSON args in, JSON result out, pooled
// precompiled interpreter, deadline per call.
func BenchmarkWarmCall(b *testing.B) {
	sb := New(Options{})
	defer sb.Close()
	p := benchProgram(b, sb)
	ctx := context.Background()
	in := sandbox.Input{Args: benchArgs}
	b.ReportAllocs()
	for b.Loop() {
		out, err := sb.Run(ctx, p, in)
		if err != nil || string(out.Value) != "3" {
			b.Fatal(string(out.Value), err)
		}
	}
}

// BenchmarkWarmCallParallel is BenchmarkWarmCall from GOMAXPROCS goroutines at once.
func BenchmarkWarmCallParallel(b *testing.B) {
	sb := New(Options{})
	defer sb.Close()
	p := benchProgram(b, sb)
	ctx := context.Background()
	in := sandbox.Input{Args: benchArgs}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			out, err := sb.Run(ctx, p, in)
			if err != nil || string(out.Value) != "3" {
				b.Error(string(out.Value), err)
				return
			}
		}
	})
}

// BenchmarkWarmCallDecoded is BenchmarkWarmCall for a parameter type declared in the file, which
// the host cannot build: the args are decoded inside the interpreter (forge__call stub).
func BenchmarkWarmCallDecoded(b *testing.B) {
	sb := New(Options{})
	defer sb.Close()
	p, err := sb.Compile(context.Background(), sandbox.Source{Code: `package artifact

type Pair struct{ A, B int }

func Add(p Pair) int { return p.A + p.B }
`})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	in := sandbox.Input{Args: json.RawMessage(`[{"A": 1, "B": 2}]`)}
	b.ReportAllocs()
	for b.Loop() {
		out, err := sb.Run(ctx, p, in)
		if err != nil || string(out.Value) != "3" {
			b.Fatal(string(out.Value), err)
		}
	}
}

// BenchmarkComputeYaegi is sandbox/wasm's BenchmarkComputeNative and BenchmarkComputeWasm
// interpreted: the compute benchmarks of sandboxtest.ComputeCases.
func BenchmarkComputeYaegi(b *testing.B) {
	sb := New(Options{})
	defer sb.Close()
	for _, c := range sandboxtest.ComputeCases {
		b.Run(c.Name, func(b *testing.B) {
			p, err := sb.Compile(context.Background(), sandbox.Source{Code: c.Code})
			if err != nil {
				b.Fatal(err)
			}
			in := sandbox.Input{Args: json.RawMessage(c.Args), Limits: sandbox.Limits{Timeout: time.Minute}}
			b.ReportAllocs()
			cpu := sandboxtest.StartCPU()
			for b.Loop() {
				out, err := sb.Run(context.Background(), p, in)
				if err != nil || string(out.Value) != c.Want {
					b.Fatal(string(out.Value), err)
				}
			}
			cpu.Stop(b)
		})
	}
}
