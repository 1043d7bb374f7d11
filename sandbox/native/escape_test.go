package native

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/internal/guestgen"
)

// escapeMain is a test worker's main (trusted test code, not artifact code: it may use syscall)
// that tries, after the lockdown its import runs, what a memory-safety escape in guest code
// would: open a file, a socket, exec, ptrace, fork, executable memory, an fd it does not hold.
const escapeMain = `package main

import (
	"fmt"
	"runtime"
	"syscall"

	_ "forge/lockdown"
)

func report(name string, err error) {
	if err == nil {
		fmt.Printf("%s=allowed\n", name)
		return
	}
	fmt.Printf("%s=%v\n", name, err)
}

func errno(e syscall.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

func main() {
	_, err := syscall.Open("/etc/passwd", syscall.O_RDONLY, 0)
	report("open", err)
	_, err = syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	report("socket", err)
	report("execve", syscall.Exec("/bin/sh", []string{"sh", "-c", "true"}, nil))
	_, _, e := syscall.RawSyscall(syscall.SYS_PTRACE, syscall.PTRACE_TRACEME, 0, 0)
	report("ptrace", errno(e))
	_, _, e = syscall.RawSyscall6(syscall.SYS_CLONE, uintptr(syscall.SIGCHLD), 0, 0, 0, 0, 0)
	report("fork", errno(e))
	// clone3 (435 on every architecture) takes its flags in a struct the filter cannot read: it
	// is refused whatever they say, threads included (the Go runtime never uses it).
	_, _, e = syscall.RawSyscall(435, 0, 0, 0)
	report("clone3", errno(e))
	if runtime.GOARCH == "amd64" { // fork and vfork exist on amd64 only
		_, _, e = syscall.RawSyscall(57, 0, 0, 0)
		report("fork_syscall", errno(e))
		_, _, e = syscall.RawSyscall(58, 0, 0, 0)
		report("vfork", errno(e))
	} else {
		report("fork_syscall", syscall.EPERM)
		report("vfork", syscall.EPERM)
	}
	_, err = syscall.Mmap(-1, 0, 4096, syscall.PROT_READ|syscall.PROT_EXEC, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	report("mmap_exec", err)
	b, err := syscall.Mmap(-1, 0, 4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	report("mmap_rw", err)
	if err == nil {
		report("mprotect_exec", syscall.Mprotect(b, syscall.PROT_READ|syscall.PROT_EXEC))
	}
	_, err = syscall.Write(9, []byte("x"))
	report("write_fd9", err)
	report("kill", syscall.Kill(1, 0))
	_, err = syscall.Dup(1)
	report("dup", err)
}
`

// TestLockdownRefusesEscapes builds a worker whose main makes, after the lockdown, the system
// calls an escape would need, and sees each refused by the seccomp filter while what the worker
// needs (anonymous read-write memory, writes to its own fds) still works.
func TestLockdownRefusesEscapes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a worker")
	}
	stdout, stderr, err := runLockedMain(t, escapeMain)
	require.NoError(t, err, "stderr: %s", stderr)
	got := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
		k, v, _ := strings.Cut(l, "=")
		got[k] = v
	}
	t.Logf("%v", got)
	for _, name := range []string{"open", "socket", "execve", "ptrace", "fork", "clone3", "fork_syscall", "vfork", "mmap_exec", "mprotect_exec", "write_fd9", "kill", "dup"} {
		assert.Equal(t, "operation not permitted", got[name], name)
	}
	assert.Equal(t, "allowed", got["mmap_rw"])
}

// runLockedMain builds a worker of main (package main, with the lockdown package beside it) and
// runs it under a 64 MiB cap with args, with the frame pipe as its fd 3: what it printed on stdout
// and stderr, and how it ended.
func runLockedMain(t *testing.T, main string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	tc, err := shared.builder.toolchain()
	require.NoError(t, err)
	g := guestModule{files: map[string]string{
		"go.mod":               "module forge\n\ngo 1.24\n",
		"main.go":              main,
		"lockdown/lockdown.go": lockdownSource(hostSysnums),
	}}
	bin, err := goBuild(context.Background(), tc, g)
	require.NoError(t, err)
	_, w, err := pipe(false) // its fd 3
	require.NoError(t, err)
	defer w.Close()
	// As startWorker does: exec'd from its sealed image, its token first on its stdin.
	cmd := exec.Command("/proc/self/fd/"+strconv.Itoa(imageFD), append([]string{"67108864"}, args...)...)
	cmd.Env = []string{}
	cmd.Stdin = strings.NewReader(strings.Repeat("t", tokenLen))
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.ExtraFiles = []*os.File{w, nil, testImage(t, bin).f}
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// threadBombMain starts goroutines that each hold an OS thread of their own (LockOSThread, then
// block), as code that escaped the gate could: the only bound on threads is the lockdown's
// debug.SetMaxThreads, there being no RLIMIT_NPROC (it counts the user's processes, the forge's
// own included).
const threadBombMain = `package main

import (
	"fmt"
	"runtime"
	"sync"

	_ "forge/lockdown"
)

func main() {
	var wg sync.WaitGroup
	for i := 0; i < 1000; i++ {
		wg.Add(1)
		go func() {
			runtime.LockOSThread()
			wg.Done()
			select {}
		}()
	}
	wg.Wait()
	fmt.Println("1000 threads")
}
`

// TestLockdownBoundsThreads: a thread bomb stops the worker at the lockdown's thread limit (the
// runtime's "thread exhaustion", which the parent classifies as the code's crash) instead of
// making a thousand threads.
func TestLockdownBoundsThreads(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a worker")
	}
	stdout, stderr, err := runLockedMain(t, threadBombMain)
	require.Error(t, err, "stdout: %s", stdout)
	assert.NotContains(t, stdout, "1000 threads")
	assert.Contains(t, stderr, "thread exhaustion")
	assert.Contains(t, stderr, "128-thread limit")
}

// TestInitializerRunsLockedDown: an artifact's package variable initializers and init functions
// run after the lockdown (the artifact imports it, and Go initializes a package's imports first).
// The gate would refuse this artifact's syscall import; the test builds it past the gate, as an
// escape from the gate would, with the same generated module as Compile.
func TestInitializerRunsLockedDown(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a worker")
	}
	ctx := context.Background()
	code := `package artifact

import "syscall"

var atVar = try()

var atInit string

func init() { atInit = try() }

func try() string {
	fd, err := syscall.Open("/etc/passwd", syscall.O_RDONLY, 0)
	if err != nil {
		return err.Error()
	}
	syscall.Close(fd)
	return "opened"
}

func Opened() []string { return []string{atVar, atInit, try()} }
`
	norm, _, _, err := guestgen.NormalizePackage(code)
	require.NoError(t, err)
	sig, err := sandbox.ParseSignature(sandbox.Source{Code: norm})
	require.NoError(t, err)
	g, err := callGuest(norm, sig, hostSysnums)
	require.NoError(t, err)
	tc, err := shared.builder.toolchain()
	require.NoError(t, err)
	bin, err := goBuild(ctx, tc, g)
	require.NoError(t, err)
	w, err := startWorker(ctx, testImage(t, bin), t.TempDir(), sandbox.DefaultMemoryBytes)
	require.NoError(t, err)
	defer w.close()
	lim := sandbox.Limits{}.WithDefaults()
	v, err := w.call(ctx, sandbox.NewHost(ctx, sandbox.Input{Limits: lim}), nil, lim, false)
	require.NoError(t, err)
	assert.JSONEq(t, `["operation not permitted", "operation not permitted", "operation not permitted"]`, string(v))
}
