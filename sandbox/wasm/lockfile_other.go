//go:build !unix

package wasm

import (
	"context"
	"time"
)

// lockFile: without flock there is no lock; callers only lose the saving of duplicate work.
func lockFile(context.Context, string, time.Duration) (release func(), waited bool) {
	return func() {}, false
}

// lockHeld: without flock no lock is ever seen held.
func lockHeld(string) bool { return false }
