package registry_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/registry"
	"github.com/artifactforge/forge/registry/storetest"
)

// TestBackendConformance runs the store conformance table against the directory store: every
// handle a test opens is another Store on the test's directory, as another process would open it.
func TestBackendConformance(t *testing.T) {
	var mu sync.Mutex
	roots := map[string]string{}
	storetest.Run(t, func(t *testing.T) registry.Backend {
		mu.Lock()
		root, ok := roots[t.Name()]
		if !ok {
			root = t.TempDir()
			roots[t.Name()] = root
		}
		mu.Unlock()
		s, err := registry.OpenBackend(root, registry.OpenOptions{})
		require.NoError(t, err)
		t.Cleanup(func() { s.Close() })
		return s
	})
}
