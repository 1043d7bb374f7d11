package bench

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sync"
	"testing"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/internal/jsonval"
)

// warmStore is a built store with a forge on it and every method compiled, shared by the runs of
// one sub-benchmark (testing calls a benchmark function more than once).
type warmStore struct {
	dir                string
	f                  *forge.Forge
	ms                 []method
	heapPer, goroutPer float64
	err                error
}

var (
	warmMu     sync.Mutex
	warmStores = map[int]*warmStore{}
)

func openWarm(n int) *warmStore {
	warmMu.Lock()
	defer warmMu.Unlock()
	if w := warmStores[n]; w != nil {
		return w
	}
	w := &warmStore{}
	warmStores[n] = w
	cfg := Config{Methods: n, Roles: max(1, n/10), Backend: "yaegi"}
	if w.err = cfg.normalize(); w.err != nil {
		return w
	}
	dir, err := os.MkdirTemp("", "forge-bench-go-")
	if w.err = err; err != nil {
		return w
	}
	w.dir = dir
	w.ms = makeMethods(n, cfg.Roles, 0)
	var cost StoreCost
	if w.err = buildStore(context.Background(), dir, cfg, w.ms, &cost); w.err != nil {
		return w
	}
	if w.f, w.err = forge.Open(forge.Options{Store: dir, DefaultSandbox: "yaegi"}); w.err != nil {
		return w
	}
	heap0, g0 := heapAfterGC(), runtime.NumGoroutine()
	for i := range w.ms {
		if o := w.f.Call(context.Background(), w.ms[i].Role, w.ms[i].Name, w.ms[i].Args); !o.OK {
			w.err = o.Err
			return w
		}
	}
	live := float64(max(1, w.f.LivePrograms()))
	w.heapPer = float64(heapAfterGC()-heap0) / live
	w.goroutPer = float64(runtime.NumGoroutine()-g0) / live
	return w
}

// TestMain closes the benchmarks' forges and removes their stores when the test binary is done.
func TestMain(m *testing.M) {
	code := m.Run()
	warmMu.Lock()
	for _, w := range warmStores {
		if w.f != nil {
			_ = w.f.Close()
		}
		if w.dir != "" {
			_ = os.RemoveAll(w.dir)
		}
	}
	warmMu.Unlock()
	os.Exit(code)
}

// BenchmarkWarmRoundRobin is the warm phase of forge bench as a Go benchmark: a store of N methods
// (in-process yaegi), every method compiled, then calls round-robin, each answer checked;
// methods=1 is the same-run baseline. It reports the Go heap and goroutines per live artifact.
// The stores are removed when the test binary exits (TestMain).
//
//	go test -run '^$' -bench BenchmarkWarmRoundRobin -benchtime 20000x -count 5 ./bench
func BenchmarkWarmRoundRobin(b *testing.B) {
	for _, n := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("methods=%d", n), func(b *testing.B) {
			w := openWarm(n)
			if w.err != nil {
				b.Fatal(w.err)
			}
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				m := &w.ms[i%n]
				if o := w.f.Call(ctx, m.Role, m.Name, m.Args); !o.OK || !jsonval.Equal(o.Value, m.Want) {
					b.Fatalf("%s.%s: %+v", m.Role, m.Name, o)
				}
			}
			b.ReportMetric(w.heapPer, "heap-B/artifact") // after the loop: ResetTimer drops metrics
			b.ReportMetric(w.goroutPer, "goroutines/artifact")
		})
	}
}
