package native

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/sandbox"
)

// TestCachedExecutableSwappedIsRebuilt: an executable swapped in the cache (its hash no longer the
// recorded one) is never run: the next compile builds it again and answers.
func TestCachedExecutableSwappedIsRebuilt(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a worker")
	}
	cache := filepath.Join(t.TempDir(), "cache")
	ctx := context.Background()
	src := sandbox.Source{Code: "package artifact\n\nfunc Triple(n int) int { return 3 * n }\n"}
	run := func() string {
		sb, err := New(Options{CacheDir: cache})
		require.NoError(t, err)
		defer sb.Close()
		p, err := sb.Compile(ctx, src)
		require.NoError(t, err)
		defer p.Close()
		out, err := sb.Run(ctx, p, sandbox.Input{Args: json.RawMessage(`[5]`)})
		require.NoError(t, err)
		return string(out.Value)
	}
	assert.Equal(t, "15", run())
	bins, err := filepath.Glob(filepath.Join(cache, "native", "bin", "*"))
	require.NoError(t, err)
	require.Len(t, bins, 1)
	planted := []byte("#!/bin/sh\necho planted\n")
	require.NoError(t, os.WriteFile(bins[0], planted, 0o755))
	assert.Equal(t, "15", run(), "the planted file is not run")
	b, err := os.ReadFile(bins[0])
	require.NoError(t, err)
	assert.NotEqual(t, planted, b, "rebuilt over the planted file")
}
