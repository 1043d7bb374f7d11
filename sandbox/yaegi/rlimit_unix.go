//go:build linux || darwin || freebsd

package yaegi

import (
	"fmt"
	"syscall"
)

// applyRlimits caps the worker process: address space (a backstop; the watchdog reports the
// memory cap) and CPU seconds.
func applyRlimits(memLimit int64, cpuSeconds int) error {
	if memLimit > 0 {
		// Address space: what the runtime has reserved at start, plus room for the cap twice over
		// (the watchdog reports the cap; this is the backstop against a single huge allocation).
		vm := vmSize()
		lim := uint64(vm) + uint64(2*memLimit) + 256<<20
		if err := syscall.Setrlimit(syscall.RLIMIT_AS, rlimit(lim, lim)); err != nil {
			return fmt.Errorf("setrlimit AS: %w", err)
		}
	}
	if cpuSeconds > 0 {
		lim := uint64(cpuSeconds)
		if err := syscall.Setrlimit(syscall.RLIMIT_CPU, rlimit(lim, lim+5)); err != nil {
			return fmt.Errorf("setrlimit CPU: %w", err)
		}
	}
	return nil
}
