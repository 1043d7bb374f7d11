package registry

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"

	"github.com/gofrs/flock"

	"github.com/artifactforge/forge/internal/atomicfile"
	"github.com/artifactforge/forge/internal/storepath"
)

// tempPrefix marks files being written; doctor removes leftovers of crashed writers.
const tempPrefix = atomicfile.TempPrefix

// writeFileAtomic makes data the content of path so that a reader sees either the old or the new
// file, never a mix, and the new one survives a crash once this returns. The store writes through
// writeFile, which also refuses a symbolic link on the way.
func writeFileAtomic(path string, data []byte) error { return atomicfile.Write(path, data) }

func syncDir(dir string) error { return atomicfile.SyncDir(dir) }

// Nothing the store writes, locks, moves or removes is reached through a symbolic link below its
// root (forge creates none): a linked tools/<role>, roles/, index/, metrics/ or quarantine/, or a
// planted link at a lock file, would lead the writes outside the store. See internal/storepath.

// writeFile is writeFileAtomic of a path below the store's root, refusing a link on the way.
func (s *Store) writeFile(path string, data []byte) error {
	return storepath.Write(s.root, path, data)
}

// MaxFileBytes bounds a role or artifact file. An artifact holds at most 1+MaxHistory
// generations of code (each at most sandbox.MaxSourceBytes, 256 KiB), its sample (16 KiB by
// default) and its counters: a few MiB at the very most. A file over the bound is damage.
const MaxFileBytes = 16 << 20

// readStoreFile reads a role or artifact file. One that is not a regular file (a named pipe
// would block the read until a writer came; a device would never end) or is over MaxFileBytes is
// refused before a byte is read, as ErrCorrupt naming the file: the caller quarantines it like
// any damage, and nothing else is lost. A directory in its place is refused too, as a store
// error (nothing is moved).
func readStoreFile(path string) ([]byte, error) {
	f, err := storepath.OpenRegular(path, "read")
	if fi, serr := os.Stat(path); errors.Is(err, storepath.ErrNotRegular) && serr == nil && !fi.IsDir() {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err) // a pipe, a device: damage, quarantined
	} // a directory is a store that cannot be read (the forge's failure), not damage to set aside
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > MaxFileBytes {
		return nil, fmt.Errorf("%w: %s is %d bytes, over the %d-byte bound of a store file", ErrCorrupt, path, fi.Size(), MaxFileBytes)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1)) // it may have grown since the Stat
	if err == nil && len(data) > MaxFileBytes {
		err = fmt.Errorf("%w: %s is over the %d-byte bound of a store file", ErrCorrupt, path, MaxFileBytes)
	}
	return data, err
}

// trustedDirs are the store's directories whose writer decides what forge runs (code, contracts,
// lessons, the sums of built modules), the store's own included.
var trustedDirs = []string{"", "tools", rolesDir, "knowledge", "sums"}

// checkStoreDirs refuses a store whose trusted directories any user may write (mode o+w): any
// local user could plant code there that forge would run. A group the operator chose may write
// them. Not on Windows, whose modes say nothing of this.
func checkStoreDirs(root string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	for _, d := range trustedDirs {
		p := filepath.Join(root, d)
		fi, err := os.Stat(p)
		if err != nil || !fi.IsDir() {
			continue // absent: made by forge when needed, with mode 0755
		}
		if fi.Mode().Perm()&0o002 != 0 {
			return fmt.Errorf("registry: store directory %s is writable by every user (mode %04o): whoever writes it decides what forge runs; run `chmod o-w %s` (and protect the store as you would the forge binary)", p, fi.Mode().Perm(), p)
		}
	}
	return checkStoreAncestors(root)
}

// checkStoreAncestors refuses a store below a directory every user may write that is not sticky
// (as /tmp is): any of them could rename the store, or a directory or link on its way, aside and
// put a tree of theirs in its place. Both the path as given and the one its links lead to are
// checked.
func checkStoreAncestors(root string) error {
	paths := []string{root}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		paths = append(paths, real)
	}
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			continue
		}
		for d := filepath.Dir(abs); ; d = filepath.Dir(d) {
			if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o002 != 0 && fi.Mode()&fs.ModeSticky == 0 {
				return fmt.Errorf("registry: the store %s is below %s, which every user may write and is not sticky (mode %04o): any of them could move the store aside and put one of theirs, whose code forge would run, in its place; run `chmod o-w %s` (or `chmod +t %s`), or move the store", root, d, fi.Mode().Perm(), d, d)
			}
			if d == filepath.Dir(d) {
				break
			}
		}
	}
	return nil
}

// mkdirAll makes a directory below the store's root, refusing a link on the way.
func (s *Store) mkdirAll(dir string, perm fs.FileMode) error {
	return storepath.MkdirAll(s.root, dir, perm)
}

// withLock runs fn holding the cross-process lock at lockPath (below the store's root; a link on
// the way, the lock file included, is refused). flock(2) locks belong to an open file description,
// so the lock also excludes other goroutines of this process.
func (s *Store) withLock(lockPath string, fn func() error) error {
	if err := storepath.Check(s.root, lockPath, "lock"); err != nil {
		return fmt.Errorf("registry: lock %s: %w", lockPath, err)
	}
	l := flock.New(lockPath)
	if err := l.Lock(); err != nil {
		return fmt.Errorf("registry: lock %s: %w", lockPath, writeErr(filepath.Dir(lockPath), err))
	}
	defer l.Close() // Close unlocks
	return fn()
}
