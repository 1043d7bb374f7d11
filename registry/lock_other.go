//go:build !unix

package registry

import (
	"os"

	"github.com/gofrs/flock"
)

// tryLockExisting takes the lock of an existing file without waiting; see lock_unix.go. Where
// flock(2) is missing, gofrs/flock's lock (which may create the file) is checked against the
// file still existing.
func tryLockExisting(path string) (release func(), ok bool, err error) {
	if _, err := os.Stat(path); err != nil {
		return nil, false, nil
	}
	l := flock.New(path)
	ok, err = l.TryLock()
	if err != nil || !ok {
		l.Close()
		return nil, false, err
	}
	return func() { l.Close() }, true, nil
}
