package forge

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/artifactforge/forge/registry"
	"github.com/artifactforge/forge/sandbox"
)

// workingSetCode is the code of method k of the working-set benchmark: `x + k`, so that distinct
// methods are distinct programs (a wasm module, a yaegi interpreter each). identicalK is the k of
// every method of the identical variant: one code for all, so that on wasm every method shares
// one module and what differs between one method and many is the forge's per-method structures.
func workingSetCode(k int) string {
	return "package artifact\n\nfunc Add(x int) int { return x + " + strconv.Itoa(k) + " }\n"
}

const identicalK = 7

// workingSetStore writes n roles (w0000, w0001, ...) of one method, add, straight into a new
// store: no model, no gate (the artifacts are what a forge would have persisted). Role i adds
// i+1 when distinct, identicalK otherwise; it returns the roles and what each answers for x=1.
func workingSetStore(b testing.TB, n int, distinct bool) (string, []string, []string) {
	b.Helper()
	dir := b.TempDir()
	s, err := registry.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	roles, want := make([]string, n), make([]string, n)
	now := time.Now()
	for i := range roles {
		roles[i] = fmt.Sprintf("w%04d", i)
		k := identicalK
		if distinct {
			k = i + 1
		}
		want[i] = strconv.Itoa(1 + k)
		rec, err := s.PutRole(registry.Contract{Role: roles[i], Purpose: "working set", Methods: map[string]string{"add": "func Add(x int) int"}}, now)
		if err != nil {
			b.Fatal(err)
		}
		path := s.ArtifactPath(roles[i], "add")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			b.Fatal(err)
		}
		a := &registry.Artifact{SchemaVersion: registry.SchemaVersion, Role: roles[i], Method: "add", Lifecycle: registry.Durable, ContractFingerprint: rec.Fingerprint}
		a.Promote(workingSetCode(k), "initial_forge", "bench", PromptVersion, now)
		data, err := a.Encode()
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir, roles, want
}

// workingSetWasmCache is where the distinct wasm variant keeps its built modules and compiled
// code across runs ($FORGE_BENCH_WASM_CACHE, else a directory under the system's temp dir): the
// first run builds one module per method (go build + wazero compile, about a second each on a
// quiet 2-core machine), later runs load them.
func workingSetWasmCache() string {
	if d := os.Getenv("FORGE_BENCH_WASM_CACHE"); d != "" {
		return d
	}
	return filepath.Join(os.TempDir(), "forge-bench-workingset-wasm")
}

// BenchmarkWorkingSet is issue 29's working-set check, in process: methods are touched (each
// compiled and made warm, with a live-set budget that holds them all), then one method is
// called repeatedly, 200 round-robin and 1,000 round-robin, in interleaved blocks of 2,000
// calls (one op is a block of each). It reports each pattern's median and mean per call, the
// ratios to one method repeated (rr200/one, rr1000/one; the target is ≤ 2), the time the touch
// took, the memory each live program adds (rss-MiB/1000live: the process's RSS, after a full
// collection, per 1,000 live programs) and, per timed call, the page faults (minflt/call,
// majflt/call) and kernel CPU time (sys-ns/call) of the process. $FORGE_BENCH_WS_CPUPROFILE=dir
// writes a CPU profile of each variant's timed calls alone (workingSetProfile). The variants:
//
//   - yaegi: 2,000 distinct methods (`x + k`) on in-process yaegi.
//
//   - wasm-distinct: $FORGE_BENCH_WASM_DISTINCT distinct methods (default 200; rr1000 only when
//     it is at least 1,000; below 200 the round-robin is over all of them, rrN) on wasm, the
//     default backend: one module per method. Modules are cached across runs
//     (workingSetWasmCache): the first run builds them.
//
//   - wasm-identical: 2,000 identical methods (`x + 7`) on wasm: one module for all, so the
//     figure is the forge's per-method structures alone (and the live set's byte budget must
//     count the shared module once).
//
//   - wasm-clients: one method called by 200 clients (WithClient): 200 programs, each with its
//     own instance and linear memory, sharing one compiled module. Against wasm-distinct it tells
//     what distinct modules cost (their compiled code) from what distinct instances cost.
//
//     go test -run '^$' -bench BenchmarkWorkingSet -benchtime 10x -count 3 ./forge   (make bench-workingset)
func BenchmarkWorkingSet(b *testing.B) {
	distinctWasm := 200
	if n, err := strconv.Atoi(os.Getenv("FORGE_BENCH_WASM_DISTINCT")); err == nil && n > 0 {
		distinctWasm = n
	}
	cache := workingSetWasmCache()
	for _, v := range []struct {
		name, backend string
		touched       int
		distinct      bool
		clients       bool // one method (roles[0]) called as a different client for each i
	}{{"yaegi", "yaegi", 2000, true, false}, {"wasm-distinct", "wasm", distinctWasm, true, false},
		{"wasm-identical", "wasm", 2000, false, false}, {"wasm-clients", "wasm", 200, false, true}} {
		b.Run(v.name, func(b *testing.B) {
			store, roles, want := workingSetStore(b, v.touched, v.distinct)
			ctxs := make([]context.Context, len(roles))
			for i := range ctxs {
				ctxs[i] = context.Background()
				if v.clients {
					ctxs[i], roles[i] = WithClient(ctxs[i], fmt.Sprintf("c%04d", i)), roles[0]
				}
			}
			f := openForge(b, store, nil, func(o *Options) {
				o.DefaultSandbox, o.MaxLivePrograms, o.FlushInterval = v.backend, 2*v.touched, liveBenchFlush
				if v.backend == "wasm" {
					o.MaxLiveBytes = -1 // all live: the default budget's fit is TestWorkingSetFitsDefaultBudget's
					if v.distinct {
						o.Sandboxes = func(name string) (sandbox.Sandbox, error) {
							return newSandbox(name, sandbox.Config{CacheDir: filepath.Join(cache, "cache"), RecordDir: filepath.Join(cache, "sums")})
						}
					}
				}
			})
			args := json.RawMessage(`{"x":1}`)
			call := func(i int) {
				o := f.Call(ctxs[i], roles[i], "add", args)
				if !o.OK || string(o.Value) != want[i] {
					b.Fatalf("%s.add: %+v %s (want %s)", roles[i], o.Err, o.Value, want[i])
				}
			}
			rss0 := rssBytes(b)
			t0 := time.Now()
			for i := range roles { // touch every method: each is compiled and made warm
				call(i)
			}
			touch := time.Since(t0)
			if live := f.Live().Programs; live < v.touched {
				b.Fatalf("%d live programs after touching %d methods: the budget should hold them all", live, v.touched)
			}
			rss := rssBytes(b) - rss0
			patterns := []struct {
				name string
				n    int
			}{{"one", 1}, {"rr200", 200}, {"rr1000", 1000}}
			for len(patterns) > 2 && patterns[len(patterns)-1].n > v.touched {
				patterns = patterns[:len(patterns)-1]
			}
			if rr := &patterns[1]; rr.n > v.touched { // fewer distinct wasm modules: round-robin over all
				rr.name, rr.n = "rr"+strconv.Itoa(v.touched), v.touched
			}
			const block = 2000
			lat := make([][]time.Duration, len(patterns))
			total := make([]time.Duration, len(patterns))
			runtime.GC()
			stopProfile := workingSetProfile(b, v.name)
			ru0 := rusage(b)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for k := range patterns {
					if i%2 == 1 { // every other op in reverse: no pattern always runs first
						k = len(patterns) - 1 - k
					}
					t0 := time.Now()
					for j := range block {
						c0 := time.Now()
						call(j % patterns[k].n)
						lat[k] = append(lat[k], time.Since(c0))
					}
					total[k] += time.Since(t0)
				}
			}
			b.StopTimer()
			ru := rusage(b).sub(ru0)
			stopProfile()
			med := make([]float64, len(patterns))
			for k, p := range patterns {
				slices.Sort(lat[k])
				med[k] = float64(lat[k][len(lat[k])/2])
				b.ReportMetric(med[k], p.name+"-p50-ns")
				b.ReportMetric(float64(total[k])/float64(len(lat[k])), p.name+"-mean-ns")
				if k > 0 {
					b.ReportMetric(med[k]/med[0], p.name+"/one")
					b.ReportMetric(float64(total[k])/float64(total[0]), p.name+"/one-mean")
				}
			}
			calls := float64(b.N * block * len(patterns))
			b.ReportMetric(float64(ru.minflt)/calls, "minflt/call")
			b.ReportMetric(float64(ru.majflt)/calls, "majflt/call")
			b.ReportMetric(float64(ru.sys.Nanoseconds())/calls, "sys-ns/call")
			b.ReportMetric(touch.Seconds(), "touch-s")
			b.ReportMetric(float64(rss)/(1<<20)*1000/float64(v.touched), "rss-MiB/1000live")
		})
	}
}

// workingSetProfile starts a CPU profile of the timed calls alone (not the touch, which loads
// and compiles every module) when $FORGE_BENCH_WS_CPUPROFILE names a directory: one file per
// variant, <dir>/<variant>.cpu. It returns what stops it.
func workingSetProfile(b *testing.B, variant string) func() {
	dir := os.Getenv("FORGE_BENCH_WS_CPUPROFILE")
	if dir == "" {
		return func() {}
	}
	fh, err := os.Create(filepath.Join(dir, variant+".cpu"))
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(fh); err != nil {
		fh.Close()
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := fh.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
