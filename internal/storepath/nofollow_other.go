//go:build !unix

package storepath

import (
	"io/fs"
	"os"
)

// Systems without O_NOFOLLOW rely on Check (Lstat) alone.
const oNoFollow = 0

const oNonBlock = 0

func isLoop(error) bool { return false }

type statBuf struct{}

func lstatPerm(path string, _ *statBuf) (perm fs.FileMode, link, ok bool) {
	fi, err := os.Lstat(path)
	if err != nil {
		return 0, false, false
	}
	return fi.Mode().Perm(), fi.Mode()&fs.ModeSymlink != 0, true
}
