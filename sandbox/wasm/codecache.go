package wasm

import (
	"context"
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
// process (os.MkdirTemp, mode 0700), and the kept code lives under CacheDir/wasm/compiled:
//
//   - before wazero compiles a module, the kept code of that module (found by the module's
//     SHA-256 in a record under RecordDir) is read through a descriptor that follows no link, must
//     belong to this process's user with no group or other write permission, is hashed, and is
//     copied into the staging directory only if its SHA-256 is the recorded one;
//   - after a compile that found nothing to load, the file wazero wrote to the staging directory
//     is hashed, kept (mode 0600, in a directory of mode 0700 owned by the user) and recorded.
//
// Staged files are removed once wazero has read them (it holds the code in memory after that), and
// the staging directory with the sandbox.
type codeCache struct {
	wz    wazero.CompilationCache
	stage string // MkdirTemp: wazero's cache directory
	vdir  string // wazero's version directory name in stage ("wazero-<version>-<arch>-<os>")
	dir   string // CacheDir/wasm/compiled
	root  string // no link is followed below it
	rec   records
	rej   func() // counts a rejected file

	mu      sync.Mutex
	claimed map[string]bool // file names in stage/vdir that are accounted for
}

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
	stage, err := os.MkdirTemp("", "forge-wazero-")
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
	return &codeCache{wz: wz, stage: stage, vdir: ents[0].Name(), dir: dir, root: root, rec: rec, rej: rej,
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
	rec := c.rec.read(c.codeRecord(modHash))
	name, sum, ok := strings.Cut(rec, " ")
	if !ok || !isHex(name) || !isHex(sum) {
		return ""
	}
	path := filepath.Join(c.dir, c.vdir, name)
	data, err := c.readKept(path)
	if err != nil {
		return ""
	}
	if sha256Hex(data) != sum {
		c.rej()
		_ = os.Remove(path) // patched or damaged: compiled again and kept anew
		return ""
	}
	dst := filepath.Join(c.stage, c.vdir, name)
	if err := os.WriteFile(dst, data, 0o600); err != nil {
		os.Remove(dst)
		return ""
	}
	c.mu.Lock()
	c.claimed[name] = true
	c.mu.Unlock()
	return name
}

// readKept reads a kept file through a descriptor that follows no link, and only if it is the
// user's and not writable by group or others.
func (c *codeCache) readKept(path string) ([]byte, error) {
	if err := storepath.Check(c.root, path, "load compiled code"); err != nil {
		return nil, err
	}
	f, err := storepath.OpenFile(path, os.O_RDONLY, 0, "load compiled code")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxCodeBytes {
		return nil, errors.New("not a regular file of compiled code")
	}
	if err := ownedPrivate(fi); err != nil {
		return nil, err
	}
	return io.ReadAll(io.LimitReader(f, maxCodeBytes))
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
	data, err := os.ReadFile(filepath.Join(sdir, name))
	if err != nil {
		return
	}
	kdir := filepath.Join(c.dir, c.vdir)
	if storepath.MkdirAll(c.root, kdir, 0o700) != nil || privateDir(kdir) != nil {
		return
	}
	if err := storepath.Replace(c.root, filepath.Join(kdir, name), data); err != nil {
		return
	}
	_ = os.Chmod(filepath.Join(kdir, name), 0o600)
	_ = c.rec.write(c.codeRecord(modHash), name+" "+sha256Hex(data))
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
