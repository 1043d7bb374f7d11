package yaegi

import (
	"context"
	"testing"

	"github.com/artifactforge/forge/sandbox"
)

// BenchmarkCompileModes is a cold Compile in-process and isolated (worker start, compile and
// initializers in the worker), same run.
func BenchmarkCompileModes(b *testing.B) {
	for _, mode := range []string{sandbox.IsolationNone, sandbox.IsolationProcess} {
		name := "inprocess"
		if mode != "" {
			name = "isolated"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sb := New(Options{})
				if _, err := sb.Compile(context.Background(), sandbox.Source{Code: benchCode, Limits: sandbox.Limits{Isolation: mode}}); err != nil {
					b.Fatal(err)
				}
				sb.Close()
			}
		})
	}
}

// BenchmarkWarmCallIsolated is BenchmarkWarmCall through a worker process (one JSON line each
// way per call).
func BenchmarkWarmCallIsolated(b *testing.B) {
	sb := New(Options{Isolation: sandbox.IsolationProcess})
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
