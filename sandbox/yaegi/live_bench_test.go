package yaegi

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/sandboxtest"
)

// liveSet is the number of distinct programs the live-program benchmarks keep compiled.
const liveSet = 200

var declName = regexp.MustCompile(`func\s+([A-Z]\w*)\s*\(`)

// liveSources returns n distinct small programs: HumanEval canonical solutions (cycled, each
// copy made distinct by a comment). With generic, each also imports slices and uses
// slices.Contains (not one of the functions the rewriter replaces), so the interpreter must load
// the generic slices source.
func liveSources(tb testing.TB, n int, generic bool) []sandbox.Source {
	tb.Helper()
	problems := sandboxtest.LoadHumanEval(tb)
	srcs := make([]sandbox.Source, 0, n)
	for i := 0; len(srcs) < n; i++ {
		p := problems[i%len(problems)]
		m := declName.FindStringSubmatch(p.Declaration)
		if m == nil {
			tb.Fatalf("%s: no function in the declaration %q", p.TaskID, p.Declaration)
		}
		code := "package artifact\n\n" + p.Prompt + p.CanonicalSolution + fmt.Sprintf("\n// copy %d\n", i)
		if generic {
			code = strings.Replace(code, "package artifact\n", "package artifact\n\nimport \"slices\"\n", 1) +
				"\nfunc forgeHasOne(xs []int) bool { return slices.Contains(xs, 1) }\n"
		}
		srcs = append(srcs, sandbox.Source{Code: code, Func: m[1]})
	}
	return srcs
}

// liveHeap compiles srcs in a fresh sandbox and returns the heap (bytes, after a collection) and
// the goroutines the live programs hold, per program.
func liveHeap(tb testing.TB, opts Options, srcs []sandbox.Source) (heap, goroutines float64) {
	tb.Helper()
	sb := New(opts)
	defer sb.Close()
	ctx := context.Background()
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before, g0 := ms.HeapAlloc, runtime.NumGoroutine()
	progs := make([]sandbox.Program, 0, len(srcs))
	for _, src := range srcs {
		p, err := sb.Compile(ctx, src)
		if err != nil {
			tb.Fatalf("%s: %v", src.Func, err)
		}
		progs = append(progs, p)
	}
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	heap = (float64(ms.HeapAlloc) - float64(before)) / float64(len(srcs))
	goroutines = float64(runtime.NumGoroutine()-g0) / float64(len(srcs))
	runtime.KeepAlive(progs)
	for _, p := range progs {
		_ = p.Close()
	}
	return heap, goroutines
}

// BenchmarkLiveProgram measures what one live, idle yaegi program costs: heap after a collection
// (heap-B/prog) and goroutines (goroutines/prog), over liveSet distinct HumanEval programs compiled
// in one sandbox, with no generic import (plain) and importing slices (slices). Run it with
// -benchtime=1x -count=5 and take medians.
func BenchmarkLiveProgram(b *testing.B) {
	for _, c := range []struct {
		name    string
		generic bool
	}{{"plain", false}, {"slices", true}} {
		b.Run(c.name, func(b *testing.B) {
			srcs := liveSources(b, liveSet, c.generic)
			var heap, gs float64
			n := 0
			for b.Loop() {
				h, g := liveHeap(b, Options{}, srcs)
				heap += h
				gs += g
				n++
			}
			b.ReportMetric(heap/float64(n), "heap-B/prog")
			b.ReportMetric(gs/float64(n), "goroutines/prog")
		})
	}
}

// BenchmarkLiveProgramCalled follows liveSet distinct small programs through their life: compiled
// (idle, never called) and called once each: heap after a collection, goroutine stacks and
// goroutines per program at each stage. Run it with
// -benchtime=1x -count=5 and take medians.
func BenchmarkLiveProgramCalled(b *testing.B) {
	srcs := make([]sandbox.Source, liveSet)
	for i := range srcs {
		srcs[i] = sandbox.Source{Code: fmt.Sprintf("package artifact\n\nfunc Mix(a, b int) int { return a*%d + b }\n", i+2)}
	}
	type stage struct{ heap, goroutines, stack float64 }
	var sum [2]stage
	n := 0
	for b.Loop() {
		var got [2]stage
		sb := New(Options{})
		ctx := context.Background()
		var ms runtime.MemStats
		measure := func(base *stage) stage {
			runtime.GC()
			runtime.GC()
			runtime.ReadMemStats(&ms)
			if base == nil {
				return stage{float64(ms.HeapAlloc), float64(runtime.NumGoroutine()), float64(ms.StackInuse)}
			}
			return stage{(float64(ms.HeapAlloc) - base.heap) / liveSet, (float64(runtime.NumGoroutine()) - base.goroutines) / liveSet, (float64(ms.StackInuse) - base.stack) / liveSet}
		}
		base := measure(nil)
		progs := make([]sandbox.Program, 0, liveSet)
		for _, src := range srcs {
			p, err := sb.Compile(ctx, src)
			if err != nil {
				b.Fatal(err)
			}
			progs = append(progs, p)
		}
		got[0] = measure(&base)
		for i, p := range progs {
			out, err := sb.Run(ctx, p, sandbox.Input{Args: json.RawMessage(`[1, 1]`)})
			if err != nil || string(out.Value) != fmt.Sprint(i+3) {
				b.Fatal(string(out.Value), err)
			}
		}
		got[1] = measure(&base)
		runtime.KeepAlive(progs)
		for _, p := range progs {
			_ = p.Close()
		}
		_ = sb.Close()
		for i := range sum {
			sum[i].heap += got[i].heap
			sum[i].goroutines += got[i].goroutines
			sum[i].stack += got[i].stack
		}
		n++
	}
	for i, name := range []string{"compiled", "called"} {
		b.ReportMetric(sum[i].heap/float64(n), name+"-heap-B/prog")
		b.ReportMetric(sum[i].goroutines/float64(n), name+"-goroutines/prog")
		b.ReportMetric(sum[i].stack/float64(n), name+"-stack-B/prog")
	}
}

// BenchmarkRoundRobin calls 1,000 distinct programs in turn from one goroutine: ns/op is a
// call's wall time, cpu-ns/op the process's CPU time per call (the sweeper's and the collector's
// included), p50-ns the median call, goroutines-max the most goroutines seen during the run
// (sampled every 256 calls) beyond those before it. Run it with -benchtime=20000x or more (each
// program is then called 20 times).
func BenchmarkRoundRobin(b *testing.B) {
	const programs = 1000
	sb := New(Options{})
	defer sb.Close()
	ctx := context.Background()
	progs := make([]sandbox.Program, programs)
	for i := range progs {
		p, err := sb.Compile(ctx, sandbox.Source{Code: fmt.Sprintf("package artifact\n\nfunc Mix(a, b int) int { return a*%d + b }\n", i+2)})
		if err != nil {
			b.Fatal(err)
		}
		progs[i] = p
	}
	in := sandbox.Input{Args: json.RawMessage(`[1, 1]`)}
	for k, p := range progs {
		if out, err := sb.Run(ctx, p, in); err != nil || string(out.Value) != fmt.Sprint(k+3) {
			b.Fatal(string(out.Value), err)
		}
	}
	base := runtime.NumGoroutine()
	most := 0
	lat := make([]time.Duration, 0, 1<<16)
	i := 0
	b.ReportAllocs()
	cpu := processCPU(b)
	for b.Loop() {
		k := i % programs
		t0 := time.Now()
		out, err := sb.Run(ctx, progs[k], in)
		lat = append(lat, time.Since(t0))
		if err != nil || string(out.Value) != fmt.Sprint(k+3) {
			b.Fatal(string(out.Value), err)
		}
		if i%256 == 0 {
			most = max(most, runtime.NumGoroutine()-base)
		}
		i++
	}
	b.StopTimer()
	b.ReportMetric(float64(processCPU(b)-cpu)/float64(i), "cpu-ns/op")
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2]), "p50-ns")
	b.ReportMetric(float64(most), "goroutines-max")
}
