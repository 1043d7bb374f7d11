package wasm

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/sandbox"
)

const (
	trustAdd = "package artifact\n\nfunc Add(a, b int) int { return a + b }\n"
	trustSub = "package artifact\n\nfunc Sub(a, b int) int { return a - b }\n"
)

// callOnce compiles code in a new sandbox over cacheDir and calls it with args.
func callOnce(t *testing.T, cacheDir, code, args string) (string, error) {
	t.Helper()
	sb, err := New(Options{CacheDir: cacheDir})
	if err != nil {
		return "", err
	}
	defer sb.Close()
	ctx := context.Background()
	p, err := sb.Compile(ctx, sandbox.Source{Code: code})
	if err != nil {
		return "", err
	}
	defer p.Close()
	out, err := sb.Run(ctx, p, sandbox.Input{Args: json.RawMessage(args)})
	return string(out.Value), err
}

func moduleFiles(t *testing.T, cacheDir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(cacheDir, "wasm", "modules", "*"+moduleExt))
	require.NoError(t, err)
	return m
}

// TestSwappedModuleIsNotUsed: a module swapped in the cache (add's file holding sub's module)
// does not change the answer: it does not match the record of add's module and is rebuilt.
func TestSwappedModuleIsNotUsed(t *testing.T) {
	dir := t.TempDir()
	v, err := callOnce(t, dir, trustAdd, `[5, 2]`)
	require.NoError(t, err)
	require.Equal(t, "7", v)
	addMod := moduleFiles(t, dir)
	require.Len(t, addMod, 1)
	v, err = callOnce(t, dir, trustSub, `[5, 2]`)
	require.NoError(t, err)
	require.Equal(t, "3", v)
	var subMod string
	for _, m := range moduleFiles(t, dir) {
		if m != addMod[0] {
			subMod = m
		}
	}
	require.NotEmpty(t, subMod)
	a, err := os.ReadFile(addMod[0])
	require.NoError(t, err)
	s, err := os.ReadFile(subMod)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(addMod[0], s, 0o644))
	require.NoError(t, os.WriteFile(subMod, a, 0o644))

	v, err = callOnce(t, dir, trustAdd, `[5, 2]`)
	require.NoError(t, err)
	assert.Equal(t, "7", v, "add answered with the module swapped into its cache file")
	v, err = callOnce(t, dir, trustSub, `[5, 2]`)
	require.NoError(t, err)
	assert.Equal(t, "3", v)
}

// compiledFiles are the files of kept compiled code under cacheDir.
func compiledFiles(t *testing.T, cacheDir string) []string {
	t.Helper()
	var files []string
	root := filepath.Join(cacheDir, "wasm", "compiled")
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && !isTemp(d.Name()) {
			files = append(files, path)
		}
		return nil
	})
	return files
}

// patchCompiled overwrites the machine code in a file of wazero's compilation cache with int3
// instructions and recomputes its CRC, as someone who can write the cache could.
func patchCompiled(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(b), "WAZEVO"), "not a wazero cache file")
	off := 6
	off += 1 + int(b[off])
	nfn := int(binary.LittleEndian.Uint32(b[off:]))
	off += 4 + 8*nfn
	n := int(binary.LittleEndian.Uint64(b[off:]))
	off += 8
	code := b[off : off+n]
	for i := range code {
		code[i] = 0xCC
	}
	binary.LittleEndian.PutUint32(b[off+n:], crc32.Checksum(code, crc32.MakeTable(crc32.Castagnoli)))
	require.NoError(t, os.WriteFile(path, b, 0o600))
}

// TestPatchedCompiledCodeIsNotRun: machine code patched in the compiled-code cache (with its CRC
// recomputed) is not loaded by the next process, which compiles the module again and answers
// right. The call runs in a child process: loading the patched code kills the process (SIGTRAP).
func TestPatchedCompiledCodeIsNotRun(t *testing.T) {
	if dir := os.Getenv("FORGE_TEST_PATCHED_CACHE"); dir != "" {
		v, err := callOnce(t, dir, trustAdd, `[5, 2]`)
		require.NoError(t, err)
		require.Equal(t, "7", v)
		return
	}
	dir := t.TempDir()
	v, err := callOnce(t, dir, trustAdd, `[5, 2]`)
	require.NoError(t, err)
	require.Equal(t, "7", v)
	files := compiledFiles(t, dir)
	require.NotEmpty(t, files, "no compiled code kept")
	for _, f := range files {
		patchCompiled(t, f)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestPatchedCompiledCodeIsNotRun$", "-test.count=1")
	cmd.Env = append(os.Environ(), "FORGE_TEST_PATCHED_CACHE="+dir)
	out, err := cmd.CombinedOutput()
	assert.NoError(t, err, "the process loading the patched code: %s", out)
}

// TestCompiledCodeKeptAcrossProcesses: the verification keeps the cross-process cache working: a
// second sandbox loads the kept code (no file is rejected) and the kept files are private.
func TestCompiledCodeKeptAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	_, err := callOnce(t, dir, trustAdd, `[1, 2]`)
	require.NoError(t, err)
	files := compiledFiles(t, dir)
	require.Len(t, files, 1)
	fi, err := os.Stat(files[0])
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o600), fi.Mode().Perm())
	fi, err = os.Stat(filepath.Dir(files[0]))
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o700), fi.Mode().Perm())

	sb, err := New(Options{CacheDir: dir})
	require.NoError(t, err)
	defer sb.Close()
	p, err := sb.Compile(context.Background(), sandbox.Source{Code: trustAdd})
	require.NoError(t, err)
	defer p.Close()
	assert.Zero(t, sb.builder.rejected.Load())
	// wazero found the staged code: it wrote nothing new to the staging directory.
	ents, err := os.ReadDir(filepath.Join(sb.code.stage, sb.code.vdir))
	require.NoError(t, err)
	assert.Empty(t, ents, "staged files are dropped once loaded")
	assert.Equal(t, files, compiledFiles(t, dir))
}

// TestCompiledCacheRefusesOpenDir: a compiled-code directory others may write, or a link, is
// refused with a message naming it and saying what to do.
func TestCompiledCacheRefusesOpenDir(t *testing.T) {
	dir := t.TempDir()
	compiled := filepath.Join(dir, "wasm", "compiled")
	require.NoError(t, os.MkdirAll(compiled, 0o700))
	require.NoError(t, os.Chmod(compiled, 0o777))
	_, err := New(Options{CacheDir: dir})
	require.Error(t, err)
	assert.Contains(t, err.Error(), compiled)
	assert.Contains(t, err.Error(), "chmod 700")

	dir = t.TempDir()
	outside := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "wasm"), 0o755))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "wasm", "compiled")))
	_, err = New(Options{CacheDir: dir})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "symbolic link")
}

// TestSymlinkedModuleCacheIsRefused: a linked wasm/modules or wasm directory does not make the
// sandbox write modules elsewhere: the compile fails naming the link, nothing lands outside.
func TestSymlinkedModuleCacheIsRefused(t *testing.T) {
	for _, link := range []string{"wasm", "wasm/modules"} {
		t.Run(link, func(t *testing.T) {
			dir := t.TempDir()
			outside := t.TempDir()
			l := filepath.Join(dir, filepath.FromSlash(link))
			require.NoError(t, os.MkdirAll(filepath.Dir(l), 0o755))
			require.NoError(t, os.Symlink(outside, l))
			_, err := callOnce(t, dir, trustAdd, `[1, 2]`)
			require.Error(t, err)
			assert.Contains(t, err.Error(), l)
			assert.Contains(t, err.Error(), "symbolic link")
			var found []string
			_ = filepath.WalkDir(outside, func(path string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					found = append(found, path)
				}
				return nil
			})
			assert.Empty(t, found, "forge wrote through the link")
		})
	}
}

// TestPruneRefusesSymlinkedCache: a linked cache/wasm (or wasm/modules) does not make prune
// delete files outside the store: it reports the link and removes nothing through it.
func TestPruneRefusesSymlinkedCache(t *testing.T) {
	for _, link := range []string{"wasm", "wasm/modules", "wasm/compiled"} {
		t.Run(link, func(t *testing.T) {
			cache := filepath.Join(t.TempDir(), "cache")
			outside := t.TempDir()
			victim := filepath.Join(outside, "modules", "precious"+moduleExt)
			if link != "wasm" {
				victim = filepath.Join(outside, "precious"+moduleExt)
			}
			require.NoError(t, os.MkdirAll(filepath.Dir(victim), 0o755))
			require.NoError(t, os.WriteFile(victim, []byte("not forge's"), 0o644))
			old := time.Now().Add(-90 * 24 * time.Hour)
			require.NoError(t, os.Chtimes(victim, old, old))
			l := filepath.Join(cache, filepath.FromSlash(link))
			require.NoError(t, os.MkdirAll(filepath.Dir(l), 0o755))
			require.NoError(t, os.Symlink(filepath.Dir(victim), l))
			if link == "wasm" {
				require.NoError(t, os.Remove(l))
				require.NoError(t, os.Symlink(outside, l))
			}
			rep, err := PruneCache(cache, time.Now(), false)
			assert.FileExists(t, victim, "prune deleted a file outside the store")
			assert.Empty(t, rep.Removed)
			if link == "wasm" || link == "wasm/modules" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), l)
				assert.Contains(t, err.Error(), "symbolic link")
			}
		})
	}
}

// TestPruneRemovesOnlyStaleStagingDirs: a crashed process's staging directory goes; a live
// sandbox's stays (it holds the directory's lock).
func TestPruneRemovesOnlyStaleStagingDirs(t *testing.T) {
	dir := t.TempDir()
	sb, err := New(Options{CacheDir: dir})
	require.NoError(t, err)
	defer sb.Close()
	stale := filepath.Join(dir, "wasm", "compiled", stagePrefix+"crashed")
	require.NoError(t, os.MkdirAll(filepath.Join(stale, "wazero-x"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(stale, "wazero-x", "f"), []byte("left over"), 0o600))
	_, err = PruneCache(dir, time.Now(), true)
	require.NoError(t, err)
	assert.DirExists(t, stale, "a dry run removes nothing")
	_, err = PruneCache(dir, time.Now(), false)
	require.NoError(t, err)
	assert.NoDirExists(t, stale)
	assert.DirExists(t, sb.code.stage, "the live sandbox's staging directory stays")
}

// TestSymlinkedRecordDirIsRefused: a linked sums/ (the records' directory in the store) is not
// written through: the compile fails naming it.
func TestSymlinkedRecordDirIsRefused(t *testing.T) {
	store := t.TempDir()
	outside := t.TempDir()
	sums := filepath.Join(store, "sums")
	require.NoError(t, os.Symlink(outside, sums))
	sb, err := New(Options{CacheDir: filepath.Join(store, "cache"), RecordDir: sums})
	require.NoError(t, err)
	defer sb.Close()
	_, err = sb.Compile(context.Background(), sandbox.Source{Code: trustAdd})
	require.Error(t, err)
	assert.Contains(t, err.Error(), sums)
	ents, _ := os.ReadDir(outside)
	assert.Empty(t, ents)
}
