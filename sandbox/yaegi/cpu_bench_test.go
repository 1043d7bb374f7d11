package yaegi

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/artifactforge/forge/sandbox"
)

// processCPU is the CPU time this process has used (user + system).
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkWarmCallCPU is BenchmarkWarmCall reporting the process's CPU time per call
// (cpu-ns/op) next to the wall time: on a machine shared with other work, wall time varies with
// the neighbours' load much more than CPU time does.
func BenchmarkWarmCallCPU(b *testing.B) {
	sb := New(Options{})
	defer sb.Close()
	p := benchProgram(b, sb)
	ctx := context.Background()
	in := sandbox.Input{Args: benchArgs}
	b.ReportAllocs()
	start := processCPU(b)
	n := 0
	for b.Loop() {
		out, err := sb.Run(ctx, p, in)
		if err != nil || string(out.Value) != "3" {
			b.Fatal(string(out.Value), err)
		}
		n++
	}
	b.ReportMetric(float64(processCPU(b)-start)/float64(n), "cpu-ns/op")
}
