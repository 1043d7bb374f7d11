package native

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/sandbox/sandboxtest"
)

// TestCorpusHostile runs the shared hostile corpus: the same programs, the same verdict kinds as
// the other backends.
func TestCorpusHostile(t *testing.T) {
	sandboxtest.RunCorpus(t, "../testdata/hostile", newTestSandbox)
}

// TestCorpusWasmMemory runs wasm's memory bombs (not its bridge_ cases: wazero's limits): the
// worker's memory cap holds them too.
func TestCorpusWasmMemory(t *testing.T) {
	files, err := filepath.Glob("../wasm/testdata/hostile/memory_*.go")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	dir := t.TempDir()
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644))
	}
	sandboxtest.RunCorpus(t, dir, newTestSandbox)
}

// TestCorpusValid runs the whole valid corpus (a build per program: -short skips it).
func TestCorpusValid(t *testing.T) {
	if testing.Short() {
		t.Skip("a worker build per program")
	}
	sandboxtest.RunCorpus(t, "../testdata/valid", newTestSandbox)
}
