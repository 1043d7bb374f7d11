//go:build unix

package registry

import (
	"errors"
	"io/fs"
	"os"
	"syscall"

	"github.com/artifactforge/forge/internal/storepath"
)

// tryLockExisting takes the flock of an existing file without waiting and without creating it
// (a lock attempt must never bring back a journal another process has just compacted and
// removed). ok is false if the file is gone or someone else holds it; release unlocks it.
func tryLockExisting(path string) (release func(), ok bool, err error) {
	f, err := storepath.OpenRegular(path, "lock")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, false, nil
		}
		return nil, false, err
	}
	// Still the file at path (not one removed between the open and the lock)?
	held, err1 := f.Stat()
	now, err2 := os.Stat(path)
	if err1 != nil || err2 != nil || !os.SameFile(held, now) {
		f.Close()
		return nil, false, nil
	}
	return func() { f.Close() }, true, nil
}
