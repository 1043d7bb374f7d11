package registry

import (
	"fmt"
	"io/fs"
	"path/filepath"

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
