package wasm

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/sandbox"
)

// TestModuleFileRoundTrip: a cached module reads back as written; a damaged one (cut short, not
// gzip) is an error, which build treats as a cache miss.
func TestModuleFileRoundTrip(t *testing.T) {
	dir := t.TempDir()
	bin := bytes.Repeat([]byte("\x00asm\x01\x00\x00\x00 some module bytes "), 50000)
	path := filepath.Join(dir, "m"+moduleExt)
	require.NoError(t, writeModule(dir, path, bin))
	got, err := readModule(path)
	require.NoError(t, err)
	assert.Equal(t, bin, got)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Less(t, fi.Size(), int64(len(bin)/10), "stored compressed")

	z, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, z[:len(z)/2], 0o644))
	_, err = readModule(path)
	assert.Error(t, err, "cut short")
	require.NoError(t, os.WriteFile(path, bin[:1000], 0o644))
	_, err = readModule(path)
	assert.Error(t, err, "not gzip")
	_, err = readModule(filepath.Join(dir, "absent"+moduleExt))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// BenchmarkReadModule is the cold load's price for the compression: reading and decompressing
// the cached module of the hello-world artifact.
func BenchmarkReadModule(b *testing.B) {
	dir := b.TempDir()
	sb, err := New(Options{CacheDir: dir})
	require.NoError(b, err)
	_, err = sb.Compile(context.Background(), sandbox.Source{Code: helloCode})
	require.NoError(b, err)
	sb.Close()
	mods, err := filepath.Glob(filepath.Join(dir, "wasm", "modules", "*"+moduleExt))
	require.NoError(b, err)
	require.Len(b, mods, 1)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := readModule(mods[0]); err != nil {
			b.Fatal(err)
		}
	}
}
