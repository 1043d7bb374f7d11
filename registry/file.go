package registry

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/gofrs/flock"
)

// tempPrefix marks files being written; doctor removes leftovers of crashed writers.
const tempPrefix = ".tmp-"

// writeFileAtomic makes data the content of path so that a reader sees either the old or the new
// file, never a mix, and the new one survives a crash once this returns: temp file in the same
// directory, fsync, rename, fsync of the directory.
func writeFileAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, tempPrefix+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil // directories cannot be flushed there; NTFS journals the rename itself
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

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
