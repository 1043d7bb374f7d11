//go:build unix

package main

import (
	"syscall"
	"time"
)

// selfCPU is this process's user and system CPU time so far (the floor serves in it).
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
