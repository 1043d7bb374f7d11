package native

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/sandboxtest"
)

// BenchmarkComputeNativeWorker runs the compute benchmarks (sandboxtest.ComputeCases) in a native
// worker: JSON in and out over the pipes, a pooled worker, the deadline armed. The work runs in
// the worker process, so only wall time is reported (the calling thread's CPU time would miss it);
// `make bench` puts it beside sandbox/wasm's BenchmarkComputeNative (the same function called
// directly).
func BenchmarkComputeNativeWorker(b *testing.B) {
	for _, c := range sandboxtest.ComputeCases {
		b.Run(c.Name, func(b *testing.B) {
			ctx := context.Background()
			p, err := shared.Compile(ctx, sandbox.Source{Code: c.Code})
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			in := sandbox.Input{Args: json.RawMessage(c.Args)}
			b.ReportAllocs()
			for b.Loop() {
				out, err := shared.Run(ctx, p, in)
				if err != nil || string(out.Value) != c.Want {
					b.Fatal(string(out.Value), err)
				}
			}
		})
	}
}

// BenchmarkWarmCallNative is one warm call of a method that does nothing but cross the boundary:
// the pipe round trip (sandbox/difftest's BenchmarkWarmCall compares it with wasm's in one run).
func BenchmarkWarmCallNative(b *testing.B) {
	ctx := context.Background()
	p, err := shared.Compile(ctx, sandbox.Source{Code: "package artifact\n\nfunc Add(a, b int) int { return a + b }\n"})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	in := sandbox.Input{Args: json.RawMessage(`[1, 2]`)}
	b.ReportAllocs()
	for b.Loop() {
		out, err := shared.Run(ctx, p, in)
		if err != nil || string(out.Value) != "3" {
			b.Fatal(string(out.Value), err)
		}
	}
}
