package registry

import (
	"fmt"
	"path/filepath"

	"github.com/gofrs/flock"

	"github.com/artifactforge/forge/internal/atomicfile"
)

// tempPrefix marks files being written; doctor removes leftovers of crashed writers.
const tempPrefix = atomicfile.TempPrefix

// writeFileAtomic makes data the content of path so that a reader sees either the old or the new
// file, never a mix, and the new one survives a crash once this returns.
func writeFileAtomic(path string, data []byte) error { return atomicfile.Write(path, data) }

func syncDir(dir string) error { return atomicfile.SyncDir(dir) }

// withLock runs fn holding the cross-process lock at lockPath. flock(2) locks belong to an open
// file description, so the lock also excludes other goroutines of this process.
func withLock(lockPath string, fn func() error) error {
	l := flock.New(lockPath)
	if err := l.Lock(); err != nil {
		return fmt.Errorf("registry: lock %s: %w", lockPath, writeErr(filepath.Dir(lockPath), err))
	}
	defer l.Close() // Close unlocks
	return fn()
}
