package yaegi

import (
	"testing"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/sandboxtest"
)

func newTestSandbox(t *testing.T) sandbox.Sandbox { return New(Options{PoolSize: 2}) }

func TestCorpusValid(t *testing.T) {
	sandboxtest.RunCorpus(t, "../testdata/valid", newTestSandbox)
}

func TestCorpusHostile(t *testing.T) {
	sandboxtest.RunCorpus(t, "../testdata/hostile", newTestSandbox)
}
