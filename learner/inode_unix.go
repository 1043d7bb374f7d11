//go:build unix

package learner

import (
	"os"
	"syscall"
)

// inode is a file's inode number, part of its version stamp.
func inode(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}
