package forge

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/sandbox"
)

// TestEventLogThroughSymlinkIsRefused: a linked events/ or a planted events/forge.jsonl link does
// not make forge append its event log outside the store.
func TestEventLogThroughSymlinkIsRefused(t *testing.T) {
	store := t.TempDir()
	outside := t.TempDir()
	require.NoError(t, os.Symlink(outside, filepath.Join(store, "events")))
	_, _, err := newEventLog(filepath.Join(store, "events"), eventLogMaxBytes, 4)
	require.Error(t, err)
	assert.Contains(t, err.Error(), filepath.Join(store, "events"))

	store = t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(store, "events"), 0o755))
	target := filepath.Join(t.TempDir(), "victim.jsonl")
	require.NoError(t, os.Symlink(target, filepath.Join(store, "events", "forge.jsonl")))
	_, _, err = newEventLog(filepath.Join(store, "events"), eventLogMaxBytes, 4)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "symbolic link")
	assert.NoFileExists(t, target)
}

// TestWasmCacheRecordsLiveInTheStore: the forge's wasm sandbox keeps its cache records in the
// store's sums/, outside cache/, where the cache's writers cannot change them with the cache.
func TestWasmCacheRecordsLiveInTheStore(t *testing.T) {
	if wasmUnavailable(t) {
		return
	}
	root := t.TempDir()
	sb, err := DefaultSandbox("wasm", root)
	require.NoError(t, err)
	defer sb.Close()
	p, err := sb.Compile(context.Background(), sandbox.Source{Code: "package artifact\n\nfunc Add(a, b int) int { return a + b }\n"})
	require.NoError(t, err)
	defer p.Close()
	mods, _ := filepath.Glob(filepath.Join(root, "cache", "wasm", "modules", "*"))
	recs, _ := filepath.Glob(filepath.Join(root, "sums", "wasm", "modules", "*"))
	assert.Len(t, mods, 1)
	assert.Len(t, recs, 1, "the module's record is in the store's sums/")
	code, _ := filepath.Glob(filepath.Join(root, "sums", "wasm", "compiled", "*", "*"))
	assert.Len(t, code, 1, "the compiled code's record is in the store's sums/")
}

// wasmUnavailable skips a test on a machine without a Go toolchain for wasm.
func wasmUnavailable(t *testing.T) bool {
	t.Helper()
	for _, b := range sandbox.Backends() {
		if b.Name == "wasm" && b.Available != nil && b.Available() != nil {
			t.Skip("no Go toolchain for the wasm sandbox")
			return true
		}
	}
	return false
}
