package wasm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/tetratelabs/wazero"

	"github.com/artifactforge/forge/internal/storepath"
)

// codeCache keeps wazero's compiled machine code across processes without ever letting wazero
// load a file it did not verify. wazero's own file cache loads whatever file it finds under its
// directory, checked by a CRC only, and runs it: anyone who can write that directory runs machine
// code inside the forge. So wazero's cache directory here is a private staging directory of this
// process (os.MkdirTemp in CacheDir/wasm/compiled, mode 0700: ".stage-*"), and the kept code lives
// in CacheDir/wasm/compiled/<wazero version dir>/, a directory of mode 0700 that must belong to
// forge's user:
//
//   - before wazero compiles a module, the kept code of that module (found by the module's
//     SHA-256 in a record under RecordDir) is opened with a descriptor that follows no link, must
//     be a file of forge's user with no group or other write permission, and is hashed; only if
//     its SHA-256 is the recorded one is it hard-linked into the staging directory (and the link
//     checked to be the very file hashed), where wazero finds it;
//   - after a compile that found nothing to load, the file wazero wrote to the staging directory
//     is hashed, moved to the kept directory (mode 0600) and recorded.
//
// Staged links are removed once wazero has read them (it holds the code in memory after that),
// and the staging directory with the sandbox. The hard link saves copying the code (7-13 MB per
// module) at each process start.
type codeCache struct {
	wz     wazero.CompilationCache
	stage  string // MkdirTemp: wazero's cache directory
	unlock func() // releases the stage's flock (a live stage is not pruned)
	vdir   string // wazero's version directory name in stage ("wazero-<version>-<arch>-<os>")
	dir    string // CacheDir/wasm/compiled
	root   string // no link is followed below it
	rec    records
	rej    func() // counts a rejected file

	mu      sync.Mutex
	claimed map[string]bool // file names in stage/vdir that are accounted for
}

// stagePrefix names the staging directories in CacheDir/wasm/compiled (PruneCache skips them).
const stagePrefix = ".stage-"

// maxCodeBytes bounds a kept file of compiled code (wazero emits about compiledCodeFactor bytes of
// code per byte of module; the slack covers its tables).
const maxCodeBytes = 2 * compiledCodeFactor * MaxModuleBytes

func newCodeCache(cacheDir, root string, rec records, rej func()) (*codeCache, error) {
	dir := filepath.Join(cacheDir, "compiled")
	if err := storepath.MkdirAll(root, dir, 0o700); err != nil {
		return nil, fmt.Errorf("wasm: compiled-code cache: %w", err)
	}
	if err := privateDir(dir); err != nil {
		return nil, err
	}
	stage, err := os.MkdirTemp(dir, stagePrefix)
	if err != nil {
		return nil, fmt.Errorf("wasm: compiled-code staging directory: %w", err)
	}
	wz, err := wazero.NewCompilationCacheWithDir(stage)
	if err != nil {
		os.RemoveAll(stage)
		return nil, fmt.Errorf("wasm: compilation cache: %w", err)
	}
	ents, err := os.ReadDir(stage)
	if err != nil || len(ents) != 1 || !ents[0].IsDir() {
		wz.Close(context.Background())
		os.RemoveAll(stage)
		return nil, fmt.Errorf("wasm: compilation cache: unexpected layout of %s (a wazero upgrade?): %v", stage, err)
	}
	return &codeCache{wz: wz, stage: stage, unlock: lockStage(stage), vdir: ents[0].Name(), dir: dir, root: root, rec: rec, rej: rej,
		claimed: map[string]bool{}}, nil
}

// privateDir refuses a directory of kept machine code that is a link, is not the user's, or that
// group or others may write: whoever can write it could plant code for the forge to run.
func privateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("wasm: compiled-code cache: %w", err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("wasm: compiled-code cache: %w", &storepath.SymlinkError{Path: dir, Op: "keep compiled code"})
	}
	if !fi.IsDir() {
		return fmt.Errorf("wasm: compiled-code cache %s is not a directory: remove it (forge makes it again)", dir)
	}
	if err := ownedPrivate(fi); err != nil {
		return fmt.Errorf("wasm: compiled-code cache %s %v: only forge's user may write the machine code forge runs; `chmod 700 %s` (and chown it to forge's user), or remove it (forge makes it again)", dir, err, dir)
	}
	return nil
}

// codeRecord is where the kept code of the module with SHA-256 modHash is recorded: the name
// wazero gives the file and the file's SHA-256.
func (c *codeCache) codeRecord(modHash string) string {
	return "compiled/" + c.vdir + "/" + modHash
}

// stageFor copies the verified kept code of a module into the staging directory, if there is
// one. It returns the staged file's name ("" if nothing was staged).
func (c *codeCache) stageFor(modHash string) string {
	rec := c.rec.Read(c.codeRecord(modHash))
	name, sum, ok := strings.Cut(rec, " ")
	if !ok || !isHex(name) || !isHex(sum) {
		return ""
	}
	path := filepath.Join(c.dir, c.vdir, name)
	got, fi, err := c.hashKept(path)
	if err != nil {
		return ""
	}
	if got != sum {
		c.rej()
		_ = os.Remove(path) // patched or damaged: compiled again and kept anew
		return ""
	}
	dst := filepath.Join(c.stage, c.vdir, name)
	if err := os.Link(path, dst); err != nil {
		return ""
	}
	// The link must be the file hashed, not one put at path since.
	if lfi, err := os.Lstat(dst); err != nil || !os.SameFile(fi, lfi) {
		os.Remove(dst)
		return ""
	}
	c.mu.Lock()
	c.claimed[name] = true
	c.mu.Unlock()
	return name
}

// hashKept hashes a kept file through a descriptor that follows no link, and only if it is the
// user's and not writable by group or others.
func (c *codeCache) hashKept(path string) (string, fs.FileInfo, error) {
	if err := storepath.Check(c.root, path, "load compiled code"); err != nil {
		return "", nil, err
	}
	f, err := storepath.OpenFile(path, os.O_RDONLY, 0, "load compiled code")
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxCodeBytes {
		return "", nil, errors.New("not a regular file of compiled code")
	}
	if err := ownedPrivate(fi); err != nil {
		return "", nil, err
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", nil, err
	}
	return hex.EncodeToString(h.Sum(nil)), fi, nil
}

// after runs once wazero compiled the module: a staged file is dropped (wazero holds the code
// now); a file wazero wrote because nothing was staged is kept and recorded. Which new file is
// the module's is known only when exactly one appeared that no other compile accounts for;
// otherwise nothing is kept this time (the next process compiles again and keeps it).
func (c *codeCache) after(modHash, staged string, before map[string]bool) {
	sdir := filepath.Join(c.stage, c.vdir)
	if staged != "" {
		c.drop(staged)
		return
	}
	ents, err := os.ReadDir(sdir)
	if err != nil {
		return
	}
	c.mu.Lock()
	var fresh []string
	for _, e := range ents {
		n := e.Name()
		if !before[n] && !c.claimed[n] && isHex(n) {
			fresh = append(fresh, n)
		}
	}
	if len(fresh) != 1 {
		c.mu.Unlock()
		return
	}
	name := fresh[0]
	c.claimed[name] = true
	c.mu.Unlock()
	defer c.drop(name)
	src := filepath.Join(sdir, name)
	if err := os.Chmod(src, 0o600); err != nil {
		return
	}
	sum, _, err := c.hashKept(src)
	if err != nil {
		return
	}
	kdir := filepath.Join(c.dir, c.vdir)
	if storepath.MkdirAll(c.root, kdir, 0o700) != nil || privateDir(kdir) != nil {
		return
	}
	// Moved, not copied: the staging directory is in the same directory tree. The record goes
	// last: kept code without a record is compiled again.
	if err := os.Rename(src, filepath.Join(kdir, name)); err != nil {
		return
	}
	_ = c.rec.Write(c.codeRecord(modHash), name+" "+sum)
}

// snapshot is the set of file names in the staging directory now.
func (c *codeCache) snapshot() map[string]bool {
	ents, _ := os.ReadDir(filepath.Join(c.stage, c.vdir))
	m := make(map[string]bool, len(ents))
	for _, e := range ents {
		m[e.Name()] = true
	}
	return m
}

func (c *codeCache) drop(name string) {
	os.Remove(filepath.Join(c.stage, c.vdir, name))
	c.mu.Lock()
	delete(c.claimed, name)
	c.mu.Unlock()
}

// close closes wazero's cache and removes the staging directory.
func (c *codeCache) close() error {
	err := c.wz.Close(context.Background())
	os.RemoveAll(c.stage)
	c.unlock()
	return err
}

func isHex(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, r := range s {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') {
			return false
		}
	}
	return true
}
