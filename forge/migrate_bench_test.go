package forge

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/artifactforge/forge/registry"
	"github.com/artifactforge/forge/registry/nats/embedded"
)

// BenchmarkMigrate1k is Migrate (`forge store migrate`: read, write, verify) of a directory store of 1,000
// artifacts (10 roles x 100 methods, 3 kept generations each) into an empty fleet store on an
// embedded single node (fsync on every write), and of that fleet store into a new directory.
func BenchmarkMigrate1k(b *testing.B) {
	src := b.TempDir()
	s, err := registry.Open(src)
	if err != nil {
		b.Fatal(err)
	}
	for r := 0; r < 10; r++ {
		role := fmt.Sprintf("role_%02d", r)
		rec, err := s.PutRole(registry.Contract{Role: role, Purpose: "bench"}, time.Now())
		if err != nil {
			b.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(src, "tools", role), 0o755); err != nil {
			b.Fatal(err)
		}
		for m := 0; m < 100; m++ {
			method := fmt.Sprintf("method_%03d", m)
			a := &registry.Artifact{SchemaVersion: registry.SchemaVersion, Role: role, Method: method, Lifecycle: registry.Durable, ContractFingerprint: rec.Fingerprint}
			for g := 0; g < 3; g++ {
				a.Promote(fmt.Sprintf("package artifact\n\n// v%d\nfunc Method%03d(s string) string { return s }\n", g, m), "initial_forge", "bench", "pv1", time.Now())
			}
			a.SuccessCount = int64(m)
			data, _ := a.Encode()
			if err := os.WriteFile(s.ArtifactPath(role, method), data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	url, stop, err := embedded.Start(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer stop()
	open := func(spec string) registry.Backend {
		st, err := registry.OpenBackend(spec, registry.OpenOptions{LocalDir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		return st
	}
	migrate := func(from, to string) time.Duration {
		src, dst := open(from), open(to)
		defer src.Close()
		defer dst.Close()
		start := time.Now()
		rep, err := Migrate(src, dst, false, func() (registry.Backend, error) { return open(to), nil })
		if err != nil {
			b.Fatal(err)
		}
		if rep.Artifacts != 1000 || !rep.Verified {
			b.Fatalf("copied %d artifacts, verified %v", rep.Artifacts, rep.Verified)
		}
		return time.Since(start)
	}
	var toFleet, toDir time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		fleet := fmt.Sprintf("%s/m%d", url, i)
		toFleet += migrate(src, fleet)
		toDir += migrate(fleet, filepath.Join(b.TempDir(), "copy"))
	}
	b.ReportMetric(toFleet.Seconds()/float64(b.N), "s/dir-to-nats")
	b.ReportMetric(toDir.Seconds()/float64(b.N), "s/nats-to-dir")
}
