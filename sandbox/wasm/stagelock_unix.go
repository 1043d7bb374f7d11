//go:build unix

package wasm

import (
	"os"
	"syscall"
)

// lockStage holds an flock on a staging directory for as long as its sandbox lives, so that
// PruneCache can tell a crashed process's leftover directory from a live one.
func lockStage(dir string) (release func()) {
	f, err := os.Open(dir)
	if err != nil {
		return func() {}
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		f.Close()
		return func() {}
	}
	return func() { f.Close() }
}

// staleStage reports whether no live sandbox holds the staging directory dir.
func staleStage(dir string) bool {
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}
