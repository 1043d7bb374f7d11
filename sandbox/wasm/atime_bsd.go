//go:build darwin || freebsd

package wasm

import (
	"syscall"
	"time"
)

func accessTime(st *syscall.Stat_t) time.Time { return time.Unix(st.Atimespec.Sec, st.Atimespec.Nsec) }
