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
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return func() {}, false
	}
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
