package forge

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/artifactforge/forge/registry"
)

// workingSetCode is the code of every method of the working-set benchmark: identical methods, so
// that what differs between one method repeated and many round-robin is the working set alone.
const workingSetCode = "package artifact\n\nfunc Add(x int) int { return x + 7 }\n"

// workingSetStore writes n roles (w0000, w0001, ...) of one method, add, each with the same
// persisted code, straight into a new store: no model, no gate (the artifacts are what a forge
// would have persisted).
func workingSetStore(b *testing.B, n int) (string, []string) {
	b.Helper()
	dir := b.TempDir()
	s, err := registry.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	roles := make([]string, n)
	now := time.Now()
	for i := range roles {
		roles[i] = fmt.Sprintf("w%04d", i)
		rec, err := s.PutRole(registry.Contract{Role: roles[i], Purpose: "working set", Methods: map[string]string{"add": "func Add(x int) int"}}, now)
		if err != nil {
			b.Fatal(err)
		}
		path := s.ArtifactPath(roles[i], "add")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			b.Fatal(err)
		}
		a := &registry.Artifact{SchemaVersion: registry.SchemaVersion, Role: roles[i], Method: "add", Lifecycle: registry.Durable, ContractFingerprint: rec.Fingerprint}
		a.Promote(workingSetCode, "initial_forge", "bench", PromptVersion, now)
		data, err := a.Encode()
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir, roles
}

// BenchmarkWorkingSet is issue 29's working-set check, in process, on wasm (the default backend)
// and on in-process yaegi: 2,000 identical methods (`x + 7`, one per role) are touched, then one
// method is called repeatedly, 200 round-robin and 1,000 round-robin, in interleaved blocks of
// 2,000 calls (one op is a block of each), with a live-set budget that holds all 2,000. It
// reports each pattern's median and mean per call and the ratios to one method repeated
// (rr200/one, rr1000/one; the target is ≤ 2).
//
//	go test -run '^$' -bench BenchmarkWorkingSet -benchtime 10x -count 3 ./forge
func BenchmarkWorkingSet(b *testing.B) {
	const touched, block = 2000, 2000
	store, roles := workingSetStore(b, touched)
	for _, backend := range []string{"wasm", "yaegi"} {
		b.Run(backend, func(b *testing.B) {
			f := openForge(b, store, nil, func(o *Options) {
				o.DefaultSandbox, o.MaxLivePrograms, o.FlushInterval = backend, 2*touched, liveBenchFlush
				o.MaxLiveBytes = -1 // wasm: the methods share one program, which each would count against the bytes
			})
			ctx := context.Background()
			args := json.RawMessage(`{"x":1}`)
			call := func(role string) {
				o := f.Call(ctx, role, "add", args)
				if !o.OK || string(o.Value) != "8" {
					b.Fatalf("%s.add: %+v %s", role, o.Err, o.Value)
				}
			}
			for _, r := range roles { // touch every method: each is compiled and made warm
				if o := f.Call(ctx, r, "add", args); !o.OK {
					b.Fatal(o.Err)
				}
			}
			if live := f.Live().Programs; live < touched {
				b.Fatalf("%d live programs after touching %d methods: the budget should hold them all", live, touched)
			}
			patterns := []struct {
				name string
				n    int
			}{{"one", 1}, {"rr200", 200}, {"rr1000", 1000}}
			lat := make([][]time.Duration, len(patterns))
			total := make([]time.Duration, len(patterns))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for k := range patterns {
					p := patterns[k]
					if i%2 == 1 { // every other op in reverse: no pattern always runs first
						p = patterns[len(patterns)-1-k]
						k = len(patterns) - 1 - k
					}
					t0 := time.Now()
					for j := range block {
						c0 := time.Now()
						call(roles[j%p.n])
						lat[k] = append(lat[k], time.Since(c0))
					}
					total[k] += time.Since(t0)
				}
			}
			b.StopTimer()
			med := make([]float64, len(patterns))
			for k, p := range patterns {
				slices.Sort(lat[k])
				med[k] = float64(lat[k][len(lat[k])/2])
				b.ReportMetric(med[k], p.name+"-p50-ns")
				b.ReportMetric(float64(total[k])/float64(len(lat[k])), p.name+"-mean-ns")
			}
			b.ReportMetric(med[1]/med[0], "rr200/one")
			b.ReportMetric(med[2]/med[0], "rr1000/one")
			b.ReportMetric(float64(total[1])/float64(total[0]), "rr200/one-mean")
			b.ReportMetric(float64(total[2])/float64(total[0]), "rr1000/one-mean")
		})
	}
}
