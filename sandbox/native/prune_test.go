package native

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPruneCache removes the executables not used since the cutoff, and only reports with dryRun.
func TestPruneCache(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "cache")
	dir := filepath.Join(cache, "native", "bin")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	old, fresh := filepath.Join(dir, "old"), filepath.Join(dir, "fresh")
	require.NoError(t, os.WriteFile(old, []byte("12345"), 0o644))
	require.NoError(t, os.WriteFile(fresh, []byte("123"), 0o644))
	week := time.Now().Add(-7 * 24 * time.Hour)
	require.NoError(t, os.Chtimes(old, week, week))
	cutoff := time.Now().Add(-24 * time.Hour)

	rep, err := PruneCache(cache, cutoff, true)
	require.NoError(t, err)
	require.Len(t, rep.Removed, 1)
	assert.Equal(t, old, rep.Removed[0].Path)
	assert.FileExists(t, old, "dry run")

	rep, err = PruneCache(cache, cutoff, false)
	require.NoError(t, err)
	assert.Equal(t, int64(5), rep.RemovedBytes)
	assert.Equal(t, 1, rep.Kept)
	assert.NoFileExists(t, old)
	assert.FileExists(t, fresh)

	_, err = PruneCache(filepath.Join(t.TempDir(), "none"), cutoff, false)
	assert.NoError(t, err, "no cache yet")
}
