//go:build linux || darwin || freebsd

package wasm

import (
	"os"
	"syscall"
	"time"
)

// lastUsed is the later of a file's modification and access times. The access time is what the
// mount records: exact with strictatime, within a day with relatime (Linux's default), the
// creation time with noatime.
func lastUsed(fi os.FileInfo) time.Time {
	t := fi.ModTime()
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		if a := accessTime(st); a.After(t) {
			t = a
		}
	}
	return t
}
