package yaegi

import (
	"context"
	"fmt"
	"regexp"
	"runtime"
	"strings"
	"testing"

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
