package sandboxtest

import (
	"syscall"
	"time"
	"unsafe"
)

// ThreadCPU is the CPU time the calling thread has used (CLOCK_THREAD_CPUTIME_ID): with the
// goroutine locked to its thread (runtime.LockOSThread), what a computation cost whatever else
// the machine runs meanwhile. ok is false where the clock is not available.
func ThreadCPU() (d time.Duration, ok bool) {
	var ts syscall.Timespec
	const clockThreadCPUTimeID = 3
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
