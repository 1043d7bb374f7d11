package wasm

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/sandbox"
)

// cacheFiles lists the regular files under dir/wasm.
// cacheFiles lists the files prune manages: built modules and compiled code (not the warm-up's
// markers beside them, a few bytes that say the Go build cache has the wasip1 standard library).
func cacheFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	for _, sub := range []string{"modules", "compiled"} {
		require.NoError(t, filepath.Walk(filepath.Join(dir, "wasm", sub), func(p string, fi os.FileInfo, err error) error {
			if err == nil && fi.Mode().IsRegular() {
				files = append(files, p)
			}
			return err
		}))
	}
	return files
}

func age(t *testing.T, path string, d time.Duration) {
	t.Helper()
	old := time.Now().Add(-d)
	require.NoError(t, os.Chtimes(path, old, old))
}

func compileTwice(t *testing.T, dir string) *Sandbox {
	t.Helper()
	sb, err := New(Options{CacheDir: dir})
	require.NoError(t, err)
	t.Cleanup(func() { sb.Close() })
	prog, err := sb.Compile(context.Background(), sandbox.Source{Code: "package artifact\n\nfunc Twice(s string) string { return s + s }\n"})
	require.NoError(t, err)
	out, err := sb.Run(context.Background(), prog, sandbox.Input{Args: []byte(`["ab"]`)})
	require.NoError(t, err)
	assert.JSONEq(t, `"abab"`, string(out.Value))
	return sb
}

// TestPruneCache: files unused since the cutoff and stale temporary files go (only reported in a
// dry run); recent files and fresh temporary files stay; a pruned module is built again on use.
func TestPruneCache(t *testing.T) {
	dir := t.TempDir()
	compileTwice(t, dir)
	built := cacheFiles(t, dir)
	require.GreaterOrEqual(t, len(built), 2, "a module and its compiled code: %v", built)
	for _, f := range built {
		age(t, f, 40*24*time.Hour)
	}
	modules := filepath.Join(dir, "wasm", "modules")
	recent := filepath.Join(modules, "recent"+moduleExt)
	require.NoError(t, os.WriteFile(recent, []byte("x"), 0o644))
	staleTmp := filepath.Join(modules, ".tmp-123")
	require.NoError(t, os.WriteFile(staleTmp, []byte("xy"), 0o644))
	age(t, staleTmp, 2*time.Hour)
	freshTmp := filepath.Join(modules, ".tmp-456")
	require.NoError(t, os.WriteFile(freshTmp, []byte("xyz"), 0o644))

	cutoff := time.Now().Add(-30 * 24 * time.Hour)
	dry, err := PruneCache(dir, cutoff, true)
	require.NoError(t, err)
	var want []string
	want = append(want, built...)
	want = append(want, staleTmp)
	var got []string
	for _, f := range dry.Removed {
		got = append(got, f.Path)
		assert.Positive(t, f.Bytes)
	}
	assert.ElementsMatch(t, want, got)
	assert.Equal(t, 2, dry.Kept)
	assert.Equal(t, int64(4), dry.KeptBytes)
	for _, f := range want {
		assert.FileExists(t, f, "a dry run removes nothing")
	}

	rep, err := PruneCache(dir, cutoff, false)
	require.NoError(t, err)
	assert.Equal(t, dry.Removed, rep.Removed)
	assert.Equal(t, dry.RemovedBytes, rep.RemovedBytes)
	for _, f := range want {
		assert.NoFileExists(t, f)
	}
	assert.FileExists(t, recent)
	assert.FileExists(t, freshTmp)

	sb := compileTwice(t, dir)
	assert.Equal(t, int64(1), sb.builder.builds.Load(), "the pruned module is built again")
}

// TestCompileRefreshesModuleUse: loading a cached module marks it used, so prune keeps it.
func TestCompileRefreshesModuleUse(t *testing.T) {
	dir := t.TempDir()
	compileTwice(t, dir)
	mods, err := filepath.Glob(filepath.Join(dir, "wasm", "modules", "*"+moduleExt))
	require.NoError(t, err)
	require.Len(t, mods, 1)
	age(t, mods[0], 40*24*time.Hour)
	sb := compileTwice(t, dir)
	assert.Zero(t, sb.builder.builds.Load(), "served from the module cache")
	rep, err := PruneCache(dir, time.Now().Add(-30*24*time.Hour), true)
	require.NoError(t, err)
	for _, f := range rep.Removed {
		assert.NotEqual(t, mods[0], f.Path)
	}
}

func TestPruneCacheMissingDir(t *testing.T) {
	rep, err := PruneCache(filepath.Join(t.TempDir(), "none"), time.Now(), false)
	require.NoError(t, err)
	assert.Empty(t, rep.Removed)
	_, err = PruneCache("", time.Now(), false)
	assert.Error(t, err)
}
