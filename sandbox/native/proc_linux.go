package native

import (
	"os"
	"syscall"
)

// pipe returns a pipe whose ends are blocking (the worker reads and writes its fds with plain
// system calls) and close-on-exec.
func pipe() (r, w *os.File, err error) {
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC); err != nil {
		return nil, nil, err
	}
	return os.NewFile(uintptr(p[0]), "pipe-r"), os.NewFile(uintptr(p[1]), "pipe-w"), nil
}

// procAttr puts a worker in a process group of its own.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// killGroup kills a worker's process group.
func killGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }
