//go:build darwin || freebsd

package wasm

import (
	"os"
	"syscall"
	"time"
)

// lastUsed is the later of a file's modification and access times (see atime_linux.go).
func lastUsed(fi os.FileInfo) time.Time {
	t := fi.ModTime()
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		if a := time.Unix(st.Atimespec.Sec, st.Atimespec.Nsec); a.After(t) {
			t = a
		}
	}
	return t
}
