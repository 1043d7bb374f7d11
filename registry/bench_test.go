package registry

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

var (
	benchStoreOnce sync.Once
	benchStoreDir  string
)

// benchStore10k writes a store of 10,000 artifacts (100 roles x 100 methods) once per test binary.
// The files are written directly (no fsync) because only reading them is measured.
func benchStore10k(b *testing.B) string {
	benchStoreOnce.Do(func() {
		dir, err := os.MkdirTemp("", "forge-bench-store-")
		if err != nil {
			b.Fatal(err)
		}
		s, err := Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		for r := 0; r < 100; r++ {
			role := fmt.Sprintf("role_%03d", r)
			os.MkdirAll(filepath.Join(dir, "tools", role), 0o755)
			for m := 0; m < 100; m++ {
				method := fmt.Sprintf("method_%03d", m)
				a := &Artifact{SchemaVersion: SchemaVersion, Role: role, Method: method, Lifecycle: Durable}
				a.Promote(fmt.Sprintf("package artifact\n\n// %s.%s\nfunc Method(s string) string {\n\treturn s + %q\n}\n", role, method, method),
					"initial_forge", "bench-model", "pv1", time.Now())
				data, _ := a.Encode()
				if err := os.WriteFile(s.ArtifactPath(role, method), data, 0o644); err != nil {
					b.Fatal(err)
				}
			}
		}
		benchStoreDir = dir
	})
	return benchStoreDir
}

// BenchmarkOpenStore10k measures opening a 10,000-artifact store: registry plus the list of
// artifacts; artifact files are loaded lazily, per artifact, on first use.
func BenchmarkOpenStore10k(b *testing.B) {
	dir := benchStore10k(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		keys, err := s.List()
		if err != nil || len(keys) != 10000 {
			b.Fatal(err, len(keys))
		}
	}
}

// BenchmarkLoadAll10k measures reading, verifying (checksums) and caching all 10,000 artifacts.
func BenchmarkLoadAll10k(b *testing.B) {
	dir := benchStore10k(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		keys, _ := s.List()
		if err := s.LoadAll(keys); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLookup measures one artifact lookup from memory (the warm call path).
func BenchmarkLookup(b *testing.B) {
	dir := benchStore10k(b)
	s, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.Load("role_042", "method_042"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ok := s.Lookup("role_042", "method_042"); !ok {
			b.Fatal("miss")
		}
	}
}

// BenchmarkRecord measures recording one call outcome on the hot path (no flush in the window).
func BenchmarkRecord(b *testing.B) {
	s, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	rec := NewRecorder(s, time.Hour)
	defer rec.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rec.Record("text", "upper", Success, time.Microsecond, "")
	}
}

// BenchmarkRecordParallel is BenchmarkRecord from every core on one artifact (the worst contention).
func BenchmarkRecordParallel(b *testing.B) {
	s, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	rec := NewRecorder(s, time.Hour)
	defer rec.Close()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			rec.Record("text", "upper", Success, time.Microsecond, "")
		}
	})
}

// BenchmarkPutRoleAmong1k is the write of one role's contract in a store of 1,000 roles: one file
// per role makes it independent of the number of roles (a single registry.json rewrote them all).
func BenchmarkPutRoleAmong1k(b *testing.B) {
	s, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 1000; i++ {
		if _, err := s.PutRole(Contract{Role: fmt.Sprintf("role_%04d", i), Purpose: "bench",
			Methods: map[string]string{"m": "func M(s string) string"}}, time.Now()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.PutRole(Contract{Role: "role_0500", Purpose: fmt.Sprintf("bench %d", i)}, time.Now()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRoleWarm is the call path's role lookup: from memory within the revalidation interval.
func BenchmarkRoleWarm(b *testing.B) {
	s, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.PutRole(Contract{Role: "text", Purpose: "bench"}, time.Now()); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.Role("text"); err != nil {
			b.Fatal(err)
		}
	}
}

// storeWith writes roles x methods artifacts directly (no fsync: only what follows is measured)
// and loads them into the store's cache, as a running forge has them.
func storeWith(b *testing.B, roles, methods int) (*Store, []Key) {
	dir := b.TempDir()
	s, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	var keys []Key
	for r := 0; r < roles; r++ {
		role := fmt.Sprintf("role_%03d", r)
		if _, err := s.PutRole(Contract{Role: role, Purpose: "bench"}, time.Now()); err != nil {
			b.Fatal(err)
		}
		os.MkdirAll(filepath.Join(dir, "tools", role), 0o755)
		for m := 0; m < methods; m++ {
			method := fmt.Sprintf("method_%03d", m)
			a := &Artifact{SchemaVersion: SchemaVersion, Role: role, Method: method, Lifecycle: Durable}
			a.Promote(fmt.Sprintf("package artifact\n\nfunc Method(s string) string {\n\treturn s + %q\n}\n", method), "initial_forge", "bench-model", "pv1", time.Now())
			data, _ := a.Encode()
			if err := os.WriteFile(s.ArtifactPath(role, method), data, 0o644); err != nil {
				b.Fatal(err)
			}
			keys = append(keys, Key{role, method})
		}
	}
	if err := s.LoadAll(keys); err != nil {
		b.Fatal(err)
	}
	return s, keys
}

// v1Flush is the layout-1 flush, kept as the same-run baseline: a locked read-modify-write of
// every touched artifact file (read, decode, encode, temp file, fsync, rename, directory fsync)
// and of every touched role's file and its last-good copy for the usage count.
func v1Flush(s *Store, deltas map[Key]delta) {
	now := time.Now().UTC()
	roleCalls := map[string]int64{}
	for k, d := range deltas {
		if _, _, _, err := s.update(k.Role, k.Method, nil, nil, false, func(a *Artifact, exists bool) error {
			d.applyTo(a, now) // as layout 1 did: no index to keep
			return nil
		}); err != nil {
			panic(err)
		}
		roleCalls[k.Role] += d.calls
	}
	for role, n := range roleCalls {
		if _, err := s.updateRole(role, func(cur *RoleRecord) (*RoleRecord, error) {
			r := *cur
			r.UsageCount += n
			t := now
			r.LastUsedAt = &t
			return &r, nil
		}); err != nil {
			panic(err)
		}
	}
}

// BenchmarkFlush1000 is one flush of 1,000 touched artifacts (10 roles x 100 methods, one call
// each): journal = this layout (one append, one fsync; the compaction that follows in the
// background is measured by BenchmarkCompact1000); v1 = the layout-1 flush (file rewrites).
func BenchmarkFlush1000(b *testing.B) {
	b.Run("journal", func(b *testing.B) {
		s, keys := storeWith(b, 10, 100)
		rec := NewRecorder(s, time.Hour)
		rec.maxBytes, rec.maxAge = 1<<40, time.Hour // no compaction inside the measurement
		defer rec.Close()
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			for _, k := range keys {
				rec.Record(k.Role, k.Method, Success, time.Microsecond, "")
			}
			b.StartTimer()
			if rep := rec.Flush(); len(rep.Merged) != len(keys) {
				b.Fatalf("merged %d of %d: %v", len(rep.Merged), len(keys), rep.Dropped)
			}
		}
	})
	b.Run("fsync-floor", func(b *testing.B) {
		// What the journal flush cannot go below: one append of the same size and one fsync.
		f, err := os.OpenFile(filepath.Join(b.TempDir(), "floor"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		buf := make([]byte, 130*1000)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := f.Write(buf); err != nil {
				b.Fatal(err)
			}
			if err := f.Sync(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("v1", func(b *testing.B) {
		s, keys := storeWith(b, 10, 100)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			deltas := make(map[Key]delta, len(keys))
			for _, k := range keys {
				deltas[k] = delta{c: Counters{SuccessCount: 1, TotalDurationNanos: 1000, MaxDurationNanos: 1000}, calls: 1, recent: []byte("s")}
			}
			v1Flush(s, deltas)
		}
	})
}

// BenchmarkCompact1000 folds one sealed journal of 1,000 artifacts (one call each) into the
// artifact and role files: the background cost a flush no longer pays.
func BenchmarkCompact1000(b *testing.B) {
	s, keys := storeWith(b, 10, 100)
	rec := NewRecorder(s, time.Hour)
	rec.maxBytes, rec.maxAge = 1<<40, time.Hour
	defer rec.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		for _, k := range keys {
			rec.Record(k.Role, k.Method, Success, time.Microsecond, "")
		}
		rec.Flush()
		rec.jmu.Lock()
		s.sealJournal(rec.j)
		rec.j = nil
		rec.jmu.Unlock()
		b.StartTimer()
		rep, err := s.Compact()
		if err != nil || rep.Artifacts != len(keys) {
			b.Fatal(rep, err)
		}
	}
}

// BenchmarkList10k is the listing behind `forge ls` on 10,000 artifacts: index = Summaries (the
// summary index, a stat per artifact); files = the layout-1 path (read and verify every file).
func BenchmarkList10k(b *testing.B) {
	dir := benchStore10k(b)
	b.Run("index", func(b *testing.B) {
		s, err := Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Summaries(); err != nil { // builds the index once (the files were written directly)
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			s, err := Open(dir)
			if err != nil {
				b.Fatal(err)
			}
			sums, err := s.Summaries()
			if err != nil || len(sums) != 10000 {
				b.Fatal(err, len(sums))
			}
		}
	})
	b.Run("files", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			s, err := Open(dir)
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			if err := s.Each(func(k Key, a *Artifact, err error) error { n++; return err }); err != nil || n != 10000 {
				b.Fatal(err, n)
			}
		}
	})
}
