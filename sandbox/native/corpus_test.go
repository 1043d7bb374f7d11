package native

import (
	"testing"

	"github.com/artifactforge/forge/sandbox/sandboxtest"
)

// TestCorpusHostile runs the shared hostile corpus: the same programs, the same verdict kinds as
// the other backends.
func TestCorpusHostile(t *testing.T) {
	sandboxtest.RunCorpus(t, "../testdata/hostile", newTestSandbox)
}

// TestCorpusWasmMemory runs wasm's memory bombs: the worker's memory cap holds them too.
func TestCorpusWasmMemory(t *testing.T) {
	sandboxtest.RunCorpus(t, "../wasm/testdata/hostile", newTestSandbox)
}

func TestCorpusValid(t *testing.T) {
	sandboxtest.RunCorpus(t, "../testdata/valid", newTestSandbox)
}
