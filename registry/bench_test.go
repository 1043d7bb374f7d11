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
