package forge

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/artifactforge/forge/registry"
	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/wasm"
	"github.com/artifactforge/forge/sandbox/yaegi"
)

// liveStore fills a store with roles×methods persisted artifacts (method mN of each role adds N)
// through the forge's own generation path, on in-process yaegi.
func liveStore(b *testing.B, roles, methods int) string {
	b.Helper()
	store := b.TempDir()
	f := openForge(b, store, &methodsProvider{}, func(o *Options) { o.MaxLivePrograms = 1 })
	ctx := context.Background()
	for r := range roles {
		role := fmt.Sprintf("r%d", r)
		if err := f.AddRole(methodsContract(role, methods)); err != nil {
			b.Fatal(err)
		}
		for m := range methods {
			if o := f.Call(ctx, role, fmt.Sprintf("m%d", m), json.RawMessage(`{"x":1}`)); !o.OK {
				b.Fatal(o.Err)
			}
		}
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return store
}

// BenchmarkLiveSetWarm is a warm call (in-process yaegi) of one artifact, of 200 artifacts
// round-robin under the default budget (200), of 1,000 artifacts round-robin and Zipf-distributed
// (s=1.1, like forge bench --pattern zipf) with a budget that holds them all, and of the same
// 1,000 round-robin with a budget of 100 (every call an eviction and a compile: the cost of a
// working set larger than the budget).
func BenchmarkLiveSetWarm(b *testing.B) {
	const roles, methods = 10, 100
	store := liveStore(b, roles, methods)
	names := make([][2]string, 0, roles*methods)
	for m := range methods {
		for r := range roles {
			names = append(names, [2]string{fmt.Sprintf("r%d", r), fmt.Sprintf("m%d", m)})
		}
	}
	args := json.RawMessage(`{"x":1}`)
	for _, c := range []struct {
		name   string
		n      int // artifacts called round-robin (zipf: drawn Zipf-distributed, s=1.1, from n)
		budget int
		zipf   bool
	}{{"one", 1, 2000, false}, {"rr200", 200, 200, false}, {"rr1000-fits", 1000, 2000, false}, {"zipf1000", 1000, 2000, true}, {"rr1000-budget100", 1000, 100, false}} {
		b.Run(c.name, func(b *testing.B) {
			f := openForge(b, store, nil, func(o *Options) { o.MaxLivePrograms = c.budget; o.FlushInterval = liveBenchFlush })
			ctx := context.Background()
			for _, rm := range names[:c.n] { // warm: every program compiled once
				if o := f.Call(ctx, rm[0], rm[1], args); !o.OK {
					b.Fatal(o.Err)
				}
			}
			f.Live() // the set is warm
			ev := f.Live().Evictions
			lat := make([]time.Duration, b.N)
			pick := make([]int, b.N) // drawn before the timer: the draw is not the call's cost
			z := rand.NewZipf(rand.New(rand.NewPCG(1, 0x5eed)), 1.1, 1, uint64(c.n-1))
			for i := range pick {
				pick[i] = i % c.n
				if c.zipf {
					pick[i] = int(z.Uint64())
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				rm := names[pick[i]]
				t0 := time.Now()
				o := f.Call(ctx, rm[0], rm[1], args)
				lat[i] = time.Since(t0)
				if !o.OK {
					b.Fatal(o.Err)
				}
				sink = o.Value
			}
			b.StopTimer()
			reportQuantiles(b, lat)
			b.ReportMetric(float64(f.Live().Evictions-ev)/float64(b.N), "evictions/op")
			b.ReportMetric(float64(f.Live().Programs), "live")
			f.Close()
		})
	}
}

// rssBytes is the process's resident set after a full collection with memory given back to the OS.
func rssBytes(b *testing.B) int64 {
	runtime.GC()
	debug.FreeOSMemory()
	fh, err := os.Open("/proc/self/status")
	if err != nil {
		b.Skip("no /proc/self/status: RSS is measured on Linux only")
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	b.Skip("no VmRSS in /proc/self/status")
	return 0
}

// BenchmarkWasmRegenerationRSS regenerates one wasm method ten times through the forge and
// reports the process's RSS before the first regeneration and after the tenth (each op is the ten
// regenerations; run it with -benchtime=1x). "leak" is the same-run baseline: the replaced
// programs are never closed, as before programs had a lifetime.
func BenchmarkWasmRegenerationRSS(b *testing.B) {
	for _, leak := range []bool{false, true} {
		name := "close"
		if leak {
			name = "leak"
		}
		b.Run(name, func(b *testing.B) {
			ws, err := wasm.New(wasm.Options{CacheDir: wasmTestCache(b)})
			if err != nil {
				b.Fatal(err)
			}
			var sb sandbox.Sandbox = ws
			if leak {
				sb = leakySandbox{ws}
			}
			p := &methodsProvider{}
			p.version.Store(true)
			f := openForge(b, b.TempDir(), p, func(o *Options) {
				o.Sandboxes = func(string) (sandbox.Sandbox, error) { return sb, nil }
			})
			c := textContract()
			c.Sandbox = "wasm"
			if err := f.AddRole(c); err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			if o := f.Call(ctx, "text", "upper", json.RawMessage(`{"s":"a"}`)); !o.OK {
				b.Fatal(o.Err)
			}
			start := rssBytes(b)
			b.ResetTimer()
			for range b.N {
				for range 10 {
					if o := f.Regenerate(ctx, "text", "upper"); !o.OK {
						b.Fatal(o.Err)
					}
					if o := f.Call(ctx, "text", "upper", json.RawMessage(`{"s":"b"}`)); !o.OK {
						b.Fatal(o.Err)
					}
				}
			}
			b.StopTimer()
			end := rssBytes(b)
			b.ReportMetric(float64(start)/(1<<20), "rss-start-MiB")
			b.ReportMetric(float64(end)/(1<<20), "rss-end-MiB")
			b.ReportMetric(100*float64(end-start)/float64(start), "rss-growth-%")
			live := ws.Live()
			b.ReportMetric(float64(live.Modules), "modules")
			b.ReportMetric(float64(live.Instances), "instances")
			f.Close()
			ws.Close()
		})
	}
}

// leakySandbox never closes a program: the behaviour before programs had a lifetime.
type leakySandbox struct{ *wasm.Sandbox }

type leakyProgram struct{ sandbox.Program }

func (leakyProgram) Close() error { return nil }

func (s leakySandbox) Compile(ctx context.Context, src sandbox.Source) (sandbox.Program, error) {
	p, err := s.Sandbox.Compile(ctx, src)
	if err != nil {
		return nil, err
	}
	return leakyProgram{p}, nil
}

func (s leakySandbox) Run(ctx context.Context, p sandbox.Program, in sandbox.Input) (sandbox.Output, error) {
	if lp, ok := p.(leakyProgram); ok {
		p = lp.Program
	}
	return s.Sandbox.Run(ctx, p, in)
}

// BenchmarkLiveSetSandboxOnly is BenchmarkLiveSetWarm's call without the forge around it: the
// in-process yaegi sandbox's warm Run of one program, and of 200 and 1,000 programs round-robin. What
// BenchmarkLiveSetWarm adds to it is the forge's share (store, selector, live set, recorder).
func BenchmarkLiveSetSandboxOnly(b *testing.B) {
	sb := yaegi.New(yaegi.Options{})
	defer sb.Close()
	ctx := context.Background()
	progs := make([]sandbox.Program, 1000)
	for i := range progs {
		p, err := sb.Compile(ctx, sandbox.Source{Code: fmt.Sprintf("package artifact\n\nfunc M%d(x int) int { return x + %d }\n", i, i), Func: fmt.Sprintf("m%d", i)})
		if err != nil {
			b.Fatal(err)
		}
		progs[i] = p
	}
	in := sandbox.Input{Args: json.RawMessage(`{"x":1}`), Limits: sandbox.Limits{}.WithDefaults()}
	for _, n := range []int{1, 200, 1000} {
		b.Run(fmt.Sprintf("programs=%d", n), func(b *testing.B) {
			for _, p := range progs[:n] {
				if _, err := sb.Run(ctx, p, in); err != nil {
					b.Fatal(err)
				}
			}
			lat := make([]time.Duration, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				out, err := sb.Run(ctx, progs[i%n], in)
				lat[i] = time.Since(t0)
				if err != nil {
					b.Fatal(err)
				}
				sink = out.Value
			}
			b.StopTimer()
			reportQuantiles(b, lat)
		})
	}
}

// BenchmarkLiveSetHit is the live set's own hit path (get and release), for one key and for
// 1,000 keys round-robin.
func BenchmarkLiveSetHit(b *testing.B) {
	for _, n := range []int{1, 1000} {
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			s := newLiveSet(0, 0)
			keys := make([]liveKey, n)
			sums := make([]string, n)
			for i := range keys {
				keys[i] = liveKey{Role: fmt.Sprintf("r%d", i%10), Method: fmt.Sprintf("m%d", i)}
				sums[i] = fmt.Sprintf("%064d", i)
				s.put(newCompiled(&registry.Artifact{Role: keys[i].Role, Method: keys[i].Method, CodeChecksum: sums[i]}, nopProgram{}, nil, s))
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				p := s.get(keys[i%n], sums[i%n])
				if p == nil {
					b.Fatal("miss")
				}
				p.release()
			}
		})
	}
}

type nopProgram struct{}

func (nopProgram) Signature() sandbox.Signature { return sandbox.Signature{} }
func (nopProgram) Checksum() string             { return "" }
func (nopProgram) Source() sandbox.Source       { return sandbox.Source{} }
func (nopProgram) Close() error                 { return nil }

// reportQuantiles reports the median and 99th percentile of per-call latencies: the mean (ns/op)
// carries the collector's and the recorder's background work, which the median leaves out.
func reportQuantiles(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2]), "p50-ns")
	b.ReportMetric(float64(lat[len(lat)*99/100]), "p99-ns")
}

// BenchmarkLiveSetRoundRobinRSS calls $FORGE_BENCH_METHODS (default 2,000) persisted methods
// round-robin on in-process yaegi under the default budget and reports the process's RSS,
// goroutines and live programs after two full rounds, with the per-call p50 (each op is one call;
// run it with -benchtime=1x: the op count is fixed at two rounds).
func BenchmarkLiveSetRoundRobinRSS(b *testing.B) {
	n := 2000
	if v, err := strconv.Atoi(os.Getenv("FORGE_BENCH_METHODS")); err == nil && v >= 10 {
		n = v
	}
	store := liveStore(b, 10, n/10)
	start := rssBytes(b)
	f := openForge(b, store, nil, func(o *Options) { o.FlushInterval = liveBenchFlush })
	ctx := context.Background()
	args := json.RawMessage(`{"x":1}`)
	lat := make([]time.Duration, 0, 2*n)
	b.ResetTimer()
	for range 2 {
		for m := range n / 10 {
			for r := range 10 {
				t0 := time.Now()
				o := f.Call(ctx, fmt.Sprintf("r%d", r), fmt.Sprintf("m%d", m), args)
				lat = append(lat, time.Since(t0))
				if !o.OK {
					b.Fatal(o.Err)
				}
			}
		}
	}
	b.StopTimer()
	reportQuantiles(b, lat)
	b.ReportMetric(float64(rssBytes(b))/(1<<20), "rss-MiB")
	b.ReportMetric(float64(start)/(1<<20), "rss-before-MiB")
	b.ReportMetric(float64(runtime.NumGoroutine()), "goroutines")
	st := f.Live()
	b.ReportMetric(float64(st.Programs), "live")
	b.ReportMetric(float64(st.Evictions), "evictions")
}

// liveBenchFlush is the metrics flush interval of the live-set benchmarks: $FORGE_BENCH_FLUSH (a
// duration, e.g. 1h to leave the store's flush out of the figure), else the default.
var liveBenchFlush = func() time.Duration {
	d, _ := time.ParseDuration(os.Getenv("FORGE_BENCH_FLUSH"))
	return d
}()
