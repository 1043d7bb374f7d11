package wasm

import (
	"runtime"
	"syscall"
)

// politely runs f on an OS thread of its own at nice 10, with the processes it starts (they
// inherit the forking thread's nice value on Linux, where it is per thread), and ends that thread
// afterwards, so that no goroutine of the process runs on it later.
func politely(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		_ = syscall.Setpriority(syscall.PRIO_PROCESS, 0, 10)
		f()
	}()
	<-done
}
