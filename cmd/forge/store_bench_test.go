package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/artifactforge/forge/registry"
)

// BenchmarkLs10k is `forge ls` (text output to a buffer) in-process on a store of 10,000
// artifacts (100 roles x 100 methods): open, the summary index, formatting. The files are written
// directly (no fsync); the first listing builds the index and is not measured.
func BenchmarkLs10k(b *testing.B) {
	lsStoreOnce.Do(func() { lsStoreDir = makeLsStore(b) })
	dir := lsStoreDir
	ls := func() {
		var out, errb bytes.Buffer
		if code := run([]string{"--store", dir, "ls"}, &out, &errb); code != 0 || strings.Count(out.String(), "\n") != 10001 {
			b.Fatalf("exit %d, %d lines: %s", code, strings.Count(out.String(), "\n"), errb.String())
		}
	}
	ls()                                                   // builds the index
	time.Sleep(registry.IndexSettle + 10*time.Millisecond) // the directories settle
	ls()                                                   // records the settled directory stamps
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ls()
	}
}

var (
	lsStoreOnce sync.Once
	lsStoreDir  string
)

// makeLsStore writes the 10,000-artifact store once per test binary (removed at exit by the OS's
// temp cleanup only: the benchmark's own TempDir would go with its first run).
func makeLsStore(b *testing.B) string {
	dir, err := os.MkdirTemp("", "forge-ls-bench-")
	if err != nil {
		b.Fatal(err)
	}
	s, err := registry.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	for r := 0; r < 100; r++ {
		role := fmt.Sprintf("role_%03d", r)
		rec, err := s.PutRole(registry.Contract{Role: role, Purpose: "bench"}, time.Now())
		if err != nil {
			b.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, "tools", role), 0o755); err != nil {
			b.Fatal(err)
		}
		for m := 0; m < 100; m++ {
			method := fmt.Sprintf("method_%03d", m)
			a := &registry.Artifact{SchemaVersion: registry.SchemaVersion, Role: role, Method: method, Lifecycle: registry.Durable, ContractFingerprint: rec.Fingerprint}
			a.Promote(fmt.Sprintf("package artifact\n\nfunc Method%03d(s string) string { return s }\n", m), "initial_forge", "bench", "pv1", time.Now())
			a.SuccessCount = int64(m)
			data, _ := a.Encode()
			if err := os.WriteFile(s.ArtifactPath(role, method), data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	return dir
}
