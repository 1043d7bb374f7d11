package wasm

import (
	"os/exec"
	"syscall"
	"unsafe"
)

// boundBuild puts go build in a process group of its own, which the deadline kills whole: the
// compiler and linker it started do not outlive it.
func boundBuild(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}

// limitBuildData sets RLIMIT_DATA of the started go command (prlimit), which the compiler and
// linker it starts inherit. RLIMIT_DATA, not RLIMIT_AS: Go processes reserve address space far
// beyond what they use (a warm build's go command fails at random under an AS limit of 1.2 GB
// while using 70 MB), and since Linux 4.7 the data limit counts the private writable mappings
// where the heap lives. The go command has not started a child yet when this runs: it first
// loads the packages.
func limitBuildData(pid int, bytes uint64) error {
	lim := syscall.Rlimit{Cur: bytes, Max: bytes}
	_, _, errno := syscall.RawSyscall6(syscall.SYS_PRLIMIT64, uintptr(pid), uintptr(syscall.RLIMIT_DATA), uintptr(unsafe.Pointer(&lim)), 0, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}
