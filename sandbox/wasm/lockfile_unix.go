//go:build unix

package wasm

import (
	"context"
	"os"
	"syscall"
	"time"
)

// lockFile takes an exclusive flock on path (created if missing), polling every poll until it gets
// it or ctx ends; the returned func releases it, and waited says whether another holder made it wait. Without the lock (ctx ended, no file) it returns a
// func that does nothing: the callers' locks only save duplicate work. lockWaiting is called when it starts waiting.
func lockFile(ctx context.Context, path string, poll time.Duration) (release func(), waited bool) {
	// Private (0600): flock needs only an open file, so a lock file other users may read is one
	// that any of them could hold forever, making this user's first builds wait their deadline.
	// A file an older forge made 0644 is made private too.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return func() {}, false
	}
	_ = f.Chmod(0o600)
	for ; ; waited = true {
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			return func() { f.Close() }, waited
		}
		if !waited && lockWaiting != nil {
			lockWaiting(path)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return func() {}, waited
		case <-time.After(poll):
		}
	}
}

// lockHeld reports whether another open file holds the flock on path (a missing file: no).
func lockHeld(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil
}
