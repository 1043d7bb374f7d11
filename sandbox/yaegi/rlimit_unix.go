//go:build linux || darwin || freebsd

package yaegi

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
)

// applyRlimits caps the worker process: address space (a backstop; the watchdog reports the
// memory cap) and CPU seconds.
func applyRlimits(memLimit int64, cpuSeconds int) error {
	if memLimit > 0 {
		// Address space: what the runtime has reserved at start, plus room for the cap four times
		// over and 1 GiB. The watchdog enforces the cap on what survives a collection; this is only
		// the backstop against a single huge allocation, and it must leave room for garbage that a
		// collector starved of CPU has not reclaimed yet (with 2 x cap + 256 MiB, a loop that only
		// made garbage died as "out of memory" when the machine was loaded).
		vm := vmSize()
		lim := uint64(vm) + uint64(4*memLimit) + 1<<30
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

// exitSignal names the signal that ended a worker ("killed", "CPU time limit exceeded"), or "".
func exitSignal(ps *os.ProcessState) string {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ws.Signal().String()
	}
	return ""
}

// maxRSS is a dead worker's peak resident set in bytes (0 if unknown).
func maxRSS(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss) // bytes
	}
	return int64(ru.Maxrss) << 10 // KiB
}
