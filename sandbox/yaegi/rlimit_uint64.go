//go:build linux || darwin

package yaegi

import "syscall"

func rlimit(cur, max uint64) *syscall.Rlimit { return &syscall.Rlimit{Cur: cur, Max: max} }
