//go:build unix

package storepath

import (
	"errors"
	"io/fs"
	"syscall"
)

const oNoFollow = syscall.O_NOFOLLOW

// oNonBlock keeps an open of a named pipe from waiting for the other end.
const oNonBlock = syscall.O_NONBLOCK

func isLoop(err error) bool { return errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EMLINK) }

// statBuf is what lstatPerm reuses from one file to the next.
type statBuf = syscall.Stat_t

// lstatPerm is the permission of path, not followed, and whether it is a link (ok false: it
// cannot be read): a listing's check of each file, with no FileInfo made.
func lstatPerm(path string, st *statBuf) (perm fs.FileMode, link, ok bool) {
	if syscall.Lstat(path, st) != nil {
		return 0, false, false
	}
	return fs.FileMode(st.Mode & 0o777), st.Mode&syscall.S_IFMT == syscall.S_IFLNK, true
}
