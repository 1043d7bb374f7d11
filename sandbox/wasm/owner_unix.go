//go:build unix

package wasm

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// ownedPrivate refuses a file or directory that is not this process's user's or that group or
// others may write.
func ownedPrivate(fi fs.FileInfo) error {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("belongs to uid %d, not forge's user (uid %d)", st.Uid, os.Geteuid())
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("is writable by group or others (mode %04o)", fi.Mode().Perm())
	}
	return nil
}
