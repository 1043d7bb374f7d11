package native

import (
	"fmt"
	"io"
	"os"
	"syscall"
	"unsafe"

	"github.com/artifactforge/forge/sandbox/internal/guestgen"
)

// pipe returns a pipe whose ends are close-on-exec and blocking (the worker reads and writes its
// fds with plain system calls), but for its read end if nonblockingRead: the parent's, read
// through the poller.
func pipe(nonblockingRead bool) (r, w *os.File, err error) {
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC); err != nil {
		return nil, nil, err
	}
	if nonblockingRead {
		if err := syscall.SetNonblock(p[0], true); err != nil {
			syscall.Close(p[0])
			syscall.Close(p[1])
			return nil, nil, err
		}
	}
	return os.NewFile(uintptr(p[0]), "pipe-r"), os.NewFile(uintptr(p[1]), "pipe-w"), nil
}

// procAttr puts a worker in a process group of its own.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// killGroup kills a worker's process group.
func killGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }

// memfdCreate is memfd_create(2).
func memfdCreate(name string, flags int) (int, error) {
	p, err := syscall.BytePtrFromString(name)
	if err != nil {
		return -1, err
	}
	fd, _, e := syscall.Syscall(uintptr(hostSysnums.memfdCreate), uintptr(unsafe.Pointer(p)), uintptr(flags), 0)
	if e != 0 {
		return -1, e
	}
	return int(fd), nil
}

const (
	mfdCloexec      = 0x1
	mfdAllowSealing = 0x2
	mfdExec         = 0x10 // Linux 6.3: executable even under vm.memfd_noexec=1
	fAddSeals       = 1033
	fGetSeals       = 1034
	// F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE
	allSeals = 0x1 | 0x2 | 0x4 | 0x8
)

// sealedFile returns a memfd holding bin, sealed: no write, truncation or growth, by anyone,
// through any fd, and no seal removed. Its bytes are read back and must hash to sum.
func sealedFile(bin []byte, sum string) (*os.File, error) {
	fd, err := memfdCreate("forge-worker", mfdCloexec|mfdAllowSealing|mfdExec)
	if err == syscall.EINVAL { // a kernel before 6.3 knows no MFD_EXEC (its memfds are executable)
		fd, err = memfdCreate("forge-worker", mfdCloexec|mfdAllowSealing)
	}
	if err != nil {
		return nil, fmt.Errorf("memfd_create: %w", err)
	}
	f := os.NewFile(uintptr(fd), "forge-worker")
	if _, err := f.Write(bin); err != nil {
		f.Close()
		return nil, err
	}
	if _, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), fAddSeals, allSeals); e != 0 {
		f.Close()
		return nil, fmt.Errorf("seal: %w", e)
	}
	if seals, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), fGetSeals, 0); e != 0 || seals&allSeals != allSeals {
		f.Close()
		return nil, fmt.Errorf("seals %#x: %v", seals, e)
	}
	back, err := io.ReadAll(io.NewSectionReader(f, 0, int64(len(bin))+1))
	if err != nil || guestgen.SHA256Hex(back) != sum {
		f.Close()
		return nil, fmt.Errorf("the sealed copy does not hash to %s (%v)", sum, err)
	}
	return f, nil
}
