package nats

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/artifactforge/forge/registry"
	"github.com/artifactforge/forge/registry/nats/embedded"
)

// Latency of the KV primitives on a single embedded node over loopback, against the same-run
// baselines of the file store (registry.Store.Update, fsyncs included) and of the warm path's
// in-memory lookup (registry.Store.Lookup). Run:
//
//	go test -run '^$' -bench . -benchtime=2000x ./registry/nats
//
// p50-ns and p99-ns are per-operation latencies measured around each call.

type latencies []time.Duration

func (l latencies) report(b *testing.B) {
	if len(l) == 0 {
		return
	}
	sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
	b.ReportMetric(float64(l[len(l)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(l[len(l)*99/100].Nanoseconds()), "p99-ns")
}

func benchArtifact() *registry.Artifact {
	a := newArtifact("text_tools", "upper", "package artifact\n\nimport \"strings\"\n\nfunc Upper(s string) string {\n\treturn strings.ToUpper(s)\n}\n")
	a.Signature = registry.Signature{Func: "Upper", Decl: "func Upper(s string) string"}
	return a
}

func BenchmarkKVGetArtifact(b *testing.B) {
	s := open(b, "bench", 1, single(b))
	ctx := testCtx(b)
	k, _ := s.ArtifactKey("text_tools", "upper")
	if _, err := s.Artifacts.Put(ctx, k, benchArtifact()); err != nil {
		b.Fatal(err)
	}
	lat := make(latencies, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if _, err := s.Artifacts.Get(ctx, k); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	lat.report(b)
}

// BenchmarkKVUpdateArtifact is a compare-and-set read-modify-write of an artifact (a Get and an
// Update: two round trips), uncontended.
func BenchmarkKVUpdateArtifact(b *testing.B) {
	s := open(b, "bench", 1, single(b))
	ctx := testCtx(b)
	k, _ := s.ArtifactKey("text_tools", "upper")
	if _, err := s.Artifacts.Put(ctx, k, benchArtifact()); err != nil {
		b.Fatal(err)
	}
	lat := make(latencies, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if _, err := s.Artifacts.Update(ctx, k, func(a *registry.Artifact, _ bool) (*registry.Artifact, error) {
			a.SuccessCount++
			return a, nil
		}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	lat.report(b)
}

// BenchmarkKVPut is one blind write (one round trip), the floor of any write.
func BenchmarkKVPut(b *testing.B) {
	b.Run("sync=always", func(b *testing.B) { benchPut(b, single(b)) })
	b.Run("sync=2m", func(b *testing.B) {
		n, err := embedded.StartNode(embedded.NodeConfig{Name: "nosync", Dir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(n.Stop)
		benchPut(b, n.URL())
	})
}

func benchPut(b *testing.B, u string) {
	s := open(b, "bench", 1, u)
	ctx := testCtx(b)
	tb := NewTable(s.MetricsKV, "", JSONCodec[Metrics]())
	lat := make(latencies, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		t0 := time.Now()
		if _, err := tb.Put(ctx, "text_tools.upper", Metrics{Calls: int64(i)}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	lat.report(b)
}

// BenchmarkFileStoreUpdateArtifact is the same-run baseline: the file store's locked, fsynced
// read-modify-write of one artifact.
func BenchmarkFileStoreUpdateArtifact(b *testing.B) {
	fs, err := registry.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	a := benchArtifact()
	if _, err := fs.Update("text_tools", "upper", func(x *registry.Artifact, _ bool) error { *x = *a; return nil }); err != nil {
		b.Fatal(err)
	}
	lat := make(latencies, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if _, err := fs.Update("text_tools", "upper", func(x *registry.Artifact, _ bool) error { x.SuccessCount++; return nil }); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	lat.report(b)
}

// BenchmarkWarmLookup is the warm path's read: the in-memory snapshot the call path uses (no
// system call within the revalidation interval). A fleet store must keep this, not a KV Get.
func BenchmarkWarmLookup(b *testing.B) {
	fs, err := registry.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	a := benchArtifact()
	if _, err := fs.Update("text_tools", "upper", func(x *registry.Artifact, _ bool) error { *x = *a; return nil }); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, ok := fs.Lookup("text_tools", "upper"); !ok {
			b.Fatal("not cached")
		}
	}
}

// BenchmarkMetricsFlush1000 is one flush of deltas for 1,000 touched artifacts (1,000
// compare-and-sets, DefaultFlushParallel in flight) into the fleet metrics.
func BenchmarkMetricsFlush1000(b *testing.B) {
	b.Run("sync=always", func(b *testing.B) { benchFlush(b, single(b)) })
	b.Run("sync=2m", func(b *testing.B) {
		n, err := embedded.StartNode(embedded.NodeConfig{Name: "nosync", Dir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(n.Stop)
		benchFlush(b, n.URL())
	})
}

func benchFlush(b *testing.B, u string) {
	s := open(b, "bench", 1, u)
	ctx := testCtx(b)
	w := s.NewMetricsWriter("")
	deltas := map[registry.Key]Delta{}
	for i := range 1000 {
		d := Delta{Calls: 3, At: time.Now()}
		d.Counters.SuccessCount, d.Counters.Recent = 3, "sss"
		deltas[registry.Key{Role: fmt.Sprintf("role_%02d", i/100), Method: fmt.Sprintf("method_%03d", i%100)}] = d
	}
	w.Flush(ctx, deltas) // create the keys: the steady state is updates
	lat := make(latencies, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		rep := w.Flush(ctx, deltas)
		if len(rep.Merged) != 1000 {
			b.Fatalf("merged %d, kept %d", len(rep.Merged), len(rep.Kept))
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	lat.report(b)
}

// BenchmarkFileRecorderFlush1000 is the same-run baseline: the file store's Recorder flushing
// 1,000 touched artifacts (the layout of this branch's base; issue 10 rewrites it).
func BenchmarkFileRecorderFlush1000(b *testing.B) {
	fs, err := registry.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	var keys []registry.Key
	for i := range 1000 {
		k := registry.Key{Role: fmt.Sprintf("role_%02d", i/100), Method: fmt.Sprintf("method_%03d", i%100)}
		a := newArtifact(k.Role, k.Method, "package x // "+k.String())
		if _, err := fs.Update(k.Role, k.Method, func(x *registry.Artifact, _ bool) error { *x = *a; return nil }); err != nil {
			b.Fatal(err)
		}
		keys = append(keys, k)
	}
	rec := registry.NewRecorder(fs, time.Hour)
	defer rec.Close()
	lat := make(latencies, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		for _, k := range keys {
			for range 3 {
				rec.Record(k.Role, k.Method, registry.Success, time.Millisecond, "")
			}
		}
		b.StartTimer()
		t0 := time.Now()
		rep := rec.Flush()
		if len(rep.Merged) != 1000 {
			b.Fatalf("merged %d, dropped %d", len(rep.Merged), len(rep.Dropped))
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	lat.report(b)
}

// BenchmarkJournalFlush1000 is one process's flush of 1,000 touched artifacts into the metrics
// journal: one message, one acknowledgement (one fsync on a sync=always node).
func BenchmarkJournalFlush1000(b *testing.B) {
	s := open(b, "bench", 1, single(b))
	ctx := testCtx(b)
	w := s.NewJournalWriter("")
	deltas := deltas1000()
	lat := make(latencies, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		rep := w.Flush(ctx, deltas)
		if len(rep.Merged) != 1000 {
			b.Fatalf("merged %d, kept %d", len(rep.Merged), len(rep.Kept))
		}
		lat = append(lat, time.Since(t0))
		b.StopTimer()
		j, err := s.journalStream(ctx)
		if err == nil {
			err = j.Purge(ctx) // keep the journal from growing
		}
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.StopTimer()
	lat.report(b)
}

// BenchmarkJournalFold is the folder's side: folding 10 processes' flushes of the same 1,000
// artifacts (10 messages) into the metrics: 1,000 compare-and-sets per fold, whatever the number
// of processes.
func BenchmarkJournalFold10x1000(b *testing.B) {
	b.Run("sync=always", func(b *testing.B) { benchFold(b, single(b)) })
	b.Run("sync=2m", func(b *testing.B) { benchFold(b, singleNoSync(b)) })
}

func benchFold(b *testing.B, u string) {
	s := open(b, "bench", 1, u)
	ctx := testCtx(b)
	deltas := deltas1000()
	var ws []*JournalWriter
	for i := range 10 {
		ws = append(ws, s.NewJournalWriter(fmt.Sprint(i)))
	}
	lat := make(latencies, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		for _, w := range ws {
			w.Flush(ctx, deltas)
		}
		b.StartTimer()
		t0 := time.Now()
		fr, err := s.FoldMetrics(ctx, 0)
		if err != nil || fr.Messages != 10 || fr.Artifacts != 1000 {
			b.Fatalf("fold: %+v %v", fr.Messages, err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	lat.report(b)
}

func deltas1000() map[registry.Key]Delta {
	deltas := map[registry.Key]Delta{}
	for i := range 1000 {
		d := Delta{Calls: 3, At: time.Now()}
		d.Counters.SuccessCount, d.Counters.Recent = 3, "sss"
		deltas[registry.Key{Role: fmt.Sprintf("role_%02d", i/100), Method: fmt.Sprintf("method_%03d", i%100)}] = d
	}
	return deltas
}

// BenchmarkLeaseAcquireRelease is one uncontended generation lease: create with a TTL, then
// delete at its revision (what a cold call adds to its generation), on a single fsync-always node.
func BenchmarkLeaseAcquireRelease(b *testing.B) {
	s := open(b, "bench", 1, single(b))
	ctx := testCtx(b)
	lat := make(latencies, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		le, err := s.Leases.Acquire(ctx, "text_tools.upper", 5*time.Second)
		if err != nil {
			b.Fatal(err)
		}
		if err := le.Release(ctx); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	lat.report(b)
}

// BenchmarkWatchAcrossNodes is the time from a write through node 1 of a 3-node R3 cluster to its
// Change on a watcher connected to node 3 (the write's acknowledgement included).
func BenchmarkWatchAcrossNodes(b *testing.B) {
	c := cluster(b)
	w1 := open(b, "wbench", 3, rotate(c, 0)...)
	w3 := open(b, "wbench", 3, rotate(c, 2)...)
	ctx := testCtx(b)
	got := make(chan Change, 16)
	w, err := w3.Watch(ctx, func(ch Change) { got <- ch })
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	k, _ := w1.RoleKey("text_tools")
	lat := make(latencies, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		t0 := time.Now()
		rev, err := w1.Roles.Put(ctx, k, registry.RoleRecord{Fingerprint: fmt.Sprint(i)})
		if err != nil {
			b.Fatal(err)
		}
		for ch := range got {
			if ch.Revision == rev {
				break
			}
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	lat.report(b)
}
