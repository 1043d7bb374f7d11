//go:build !(linux || darwin || freebsd)

package wasm

import (
	"os"
	"time"
)

// lastUsed is the file's modification time where the access time is not at hand.
func lastUsed(fi os.FileInfo) time.Time { return fi.ModTime() }
