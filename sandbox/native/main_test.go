package native

import (
	"os"
	"testing"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/sandboxtest"
)

// shared is the package's sandbox: built workers are cached across runs in the shared test cache.
var shared *Sandbox

func TestMain(m *testing.M) {
	if err := available(); err != nil {
		os.Exit(0) // nothing to test here
	}
	var err error
	shared, err = New(Options{CacheDir: sandboxtest.BuildCacheDir()})
	if err != nil {
		panic(err)
	}
	code := m.Run()
	shared.Close()
	os.Exit(code)
}

// sharedSandbox hands the package's Sandbox to the corpus runner, which closes what it gets.
type sharedSandbox struct{ *Sandbox }

func (sharedSandbox) Close() error { return nil }

func newTestSandbox(*testing.T) sandbox.Sandbox { return sharedSandbox{shared} }
