package wasm

import (
	"syscall"
	"time"
)

func accessTime(st *syscall.Stat_t) time.Time { return time.Unix(st.Atim.Sec, st.Atim.Nsec) }
