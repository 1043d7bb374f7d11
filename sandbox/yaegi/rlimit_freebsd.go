package yaegi

import "syscall"

func rlimit(cur, max uint64) *syscall.Rlimit {
	return &syscall.Rlimit{Cur: int64(cur), Max: int64(max)}
}
