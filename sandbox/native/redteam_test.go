//go:build linux

package native

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/sandboxtest"
)

// TestRedteamArtifactCannotForgeTestVerdict: an artifact printing testing's verdict line
// passed its failing test (sandboxtest.RunForgedVerdictTest).
func TestRedteamArtifactCannotForgeTestVerdict(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a test worker")
	}
	sandboxtest.RunForgedVerdictTest(t, shared)
}

// signalMain is a test worker's main (trusted test code) that, locked down, signals with signal
// 0 (a permission check only) its own process and the process named by its second argument (its
// parent: the forge server, in production), then makes an x32-ABI system call, which must kill it.
const signalMain = `package main

import (
	"fmt"
	"os"
	"strconv"
	"syscall"

	_ "forge/lockdown"
)

func report(name string, e syscall.Errno) {
	if e == 0 {
		fmt.Printf("%s=allowed\n", name)
		return
	}
	fmt.Printf("%s=%v\n", name, e)
}

func main() {
	self := syscall.Getpid()
	_, _, e := syscall.RawSyscall(syscall.SYS_TGKILL, uintptr(self), uintptr(self), 0)
	report("tgkill_self", e)
	other, _ := strconv.Atoi(os.Args[2])
	_, _, e = syscall.RawSyscall(syscall.SYS_TGKILL, uintptr(other), uintptr(other), 0)
	report("tgkill_other", e)
	os.Stdout.Sync()
	_, _, e = syscall.RawSyscall(0x40000000|syscall.SYS_GETPID, 0, 0, 0)
	report("x32_getpid", e)
}
`

// TestRedteamLockdownRefusesSignalsToOtherProcesses: the filter let tgkill through whatever its
// thread group, so code that escaped Go's memory safety could kill the forge server (same user)
// or any of its other workers; the runtime only ever signals its own threads.
func TestRedteamLockdownRefusesSignalsToOtherProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a worker")
	}
	stdout, stderr, err := runLockedMain(t, signalMain, strconv.Itoa(os.Getpid()))
	t.Logf("stdout: %s stderr: %s", stdout, stderr)
	assert.Contains(t, stdout, "tgkill_self=allowed\n")
	assert.Contains(t, stdout, "tgkill_other=operation not permitted\n")
	assert.NotContains(t, stdout, "x32_getpid=")
	var ee *exec.ExitError
	if assert.ErrorAs(t, err, &ee) {
		ws, _ := ee.Sys().(syscall.WaitStatus)
		assert.True(t, ws.Signaled() && ws.Signal() == syscall.SIGSYS, "an x32 system call kills the worker: %v", err)
	}
}

// TestRedteamStderrOfAnEarlierCallIsNotThisCallsReport: what a call wrote on stderr (println)
// stayed in the worker's stderr buffer for every later call: a later call killed at its deadline
// was then reported from an earlier caller's text, as a panic with that caller's data in its
// message (wasm resets the guest's stderr per call and reports KindDeadline).
func TestRedteamStderrOfAnEarlierCallIsNotThisCallsReport(t *testing.T) {
	sb, ctx := poolOfOne(t), context.Background()
	p, err := sb.Compile(ctx, sandbox.Source{Code: `package artifact

func Spin(n int) int {
	if n == 0 {
		println("panic: secret of the caller before")
		return 0
	}
	for n > 0 {
		n++
	}
	return n
}
`})
	require.NoError(t, err)
	defer p.Close()
	out, err := sb.Run(ctx, p, sandbox.Input{Args: json.RawMessage(`[0]`)})
	require.NoError(t, err)
	assert.JSONEq(t, "0", string(out.Value))
	_, err = sb.Run(ctx, p, sandbox.Input{Args: json.RawMessage(`[1]`), Limits: sandbox.Limits{Timeout: 300 * time.Millisecond}})
	assert.Equal(t, sandbox.KindDeadline, sandbox.KindOf(err), "%v", err)
	assert.NotContains(t, fmt.Sprint(err), "secret")
}

// TestRedteamCrashReportAfterMuchStderr: a call that prints 100 KiB on stderr and then recurses
// without end is KindDepth, as on wasm: the runtime's report comes last, and the worker kept
// only the first 64 KiB of its stderr.
func TestRedteamCrashReportAfterMuchStderr(t *testing.T) {
	ctx := context.Background()
	p, err := shared.Compile(ctx, sandbox.Source{Code: `package artifact

func Deep(n int) int {
	if n == 0 {
		for i := 0; i < 1000; i++ {
			println("a line of a hundred bytes or so, printed a thousand times before the recursion ..........")
		}
	}
	return Deep(n+1) + 1
}
`})
	require.NoError(t, err)
	defer p.Close()
	_, err = shared.Run(ctx, p, sandbox.Input{Args: json.RawMessage(`[0]`)})
	assert.Equal(t, sandbox.KindDepth, sandbox.KindOf(err), "%v", err)
}

// TestRedteamPrintedPanicIsNotTheDeadlinesVerdict: a call that prints "panic: " (println) and
// then runs past its deadline is KindDeadline, as on wasm: the worker was killed, it had not
// panicked.
func TestRedteamPrintedPanicIsNotTheDeadlinesVerdict(t *testing.T) {
	ctx := context.Background()
	p, err := shared.Compile(ctx, sandbox.Source{Code: `package artifact

func Spin(n int) int {
	println("panic: not really")
	for n > 0 {
		n++
	}
	return n
}
`})
	require.NoError(t, err)
	defer p.Close()
	_, err = shared.Run(ctx, p, sandbox.Input{Args: json.RawMessage(`[1]`), Limits: sandbox.Limits{Timeout: 300 * time.Millisecond}})
	assert.Equal(t, sandbox.KindDeadline, sandbox.KindOf(err), "%v", err)
}

// TestRedteamConcurrentCompilesOfOneCode: clients compiling the same code at once (a program per
// client) share its executable's path; their writes of it must not tear each other's.
func TestRedteamConcurrentCompilesOfOneCode(t *testing.T) {
	for round := range 3 {
		sb, err := New(Options{CacheDir: sandboxtest.BuildCacheDir()})
		require.NoError(t, err)
		ctx := context.Background()
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				src := sandbox.Source{Code: "package artifact\n\nfunc Add(a, b int) int { return a + b }\n", Client: fmt.Sprint("client", i)}
				p, err := sb.Compile(ctx, src)
				if err != nil {
					errs[i] = err
					return
				}
				defer p.Close()
				_, errs[i] = sb.Run(ctx, p, sandbox.Input{Args: json.RawMessage(`[1, 2]`)})
			}()
		}
		wg.Wait()
		sb.Close()
		for i, err := range errs {
			assert.NoError(t, err, "round %d, client %d", round, i)
		}
	}
}

// TestRedteamWorkerKilledAfterItsAnswerIsNotReused: a call's deadline can fire (and its worker
// be killed) after the worker's answer has arrived; the call succeeds, and its worker must not go
// back to the pool, where the next caller's call would fail as a panic ("killed").
func TestRedteamWorkerKilledAfterItsAnswerIsNotReused(t *testing.T) {
	sb, ctx := poolOfOne(t), context.Background()
	prog, err := sb.Compile(ctx, sandbox.Source{Code: "package artifact\n\nfunc Add(a, b int) int { return a + b }\n"})
	require.NoError(t, err)
	defer prog.Close()
	p := prog.(*Program)
	lim := sandbox.Limits{}.WithDefaults()
	pl := p.pool(lim.MemoryBytes)
	w, err := sb.get(ctx, pl, lim.Timeout)
	require.NoError(t, err)
	v, err := w.call(ctx, sandbox.NewHost(ctx, sandbox.Input{Limits: lim}), []json.RawMessage{[]byte("1"), []byte("2")}, lim, false)
	require.NoError(t, err)
	assert.JSONEq(t, "3", string(v))
	w.kill() // the deadline's kill, just after the answer
	<-w.exited
	sb.put(pl, w) // as Run does
	out, err := sb.Run(ctx, prog, sandbox.Input{Args: json.RawMessage(`[2, 3]`)})
	require.NoError(t, err, "the next call got the killed worker")
	assert.JSONEq(t, "5", string(out.Value))
}

// TestRedteamFilterTgkillOwnPid: on both architectures the filter (with the worker's pid written
// in, as its lockdown does) allows tgkill to the worker's own threads only.
func TestRedteamFilterTgkillOwnPid(t *testing.T) {
	for _, s := range []sysnums{amd64Sysnums, arm64Sysnums} {
		p := buildFilter(s, allowlist(s))
		at, err := pidInsn(p)
		require.NoError(t, err, s.arch)
		p[at].K = 4242
		assert.Equal(t, uint32(retAllow), runFilter(t, p, s.auditArch, s.tgkill, [6]uint64{4242, 4243, 23}), "%s: its own thread", s.arch)
		assert.Equal(t, uint32(retErrno|errnoEPERM), runFilter(t, p, s.auditArch, s.tgkill, [6]uint64{1, 1, 9}), "%s: another process", s.arch)
	}
}

// TestRedteamPackageArrayIsUnderTheMemoryCap: a package-level array is the executable's BSS,
// mapped before the lockdown measures what the worker holds (VmData) and sets RLIMIT_DATA from it,
// and not Go heap (debug.SetMemoryLimit): filling a 128 MiB one held 128 MiB under a 64 MiB cap.
// wasm's linear memory holds its data and BSS, so the same code fails there under the cap.
func TestRedteamPackageArrayIsUnderTheMemoryCap(t *testing.T) {
	ctx := context.Background()
	p, err := shared.Compile(ctx, sandbox.Source{Code: `package artifact

var big [128 << 20]byte

func Fill(n int) int {
	for i := range big {
		big[i] = byte(n)
	}
	return len(big) >> 20
}
`, Limits: sandbox.Limits{MemoryBytes: 64 << 20}})
	if err != nil {
		assert.Equal(t, sandbox.KindMemory, sandbox.KindOf(err), "%v", err)
		return
	}
	defer p.Close()
	out, err := shared.Run(ctx, p, sandbox.Input{Args: json.RawMessage(`[1]`), Limits: sandbox.Limits{MemoryBytes: 64 << 20}})
	assert.Equal(t, sandbox.KindMemory, sandbox.KindOf(err), "filled %s MiB under a 64 MiB cap (err %v)", out.Value, err)
}

// poolOfOne is a sandbox of one worker in all: a call after another runs in the same worker.
func poolOfOne(t *testing.T) *Sandbox {
	sb, err := New(Options{CacheDir: sandboxtest.BuildCacheDir(), PoolSize: 1, MaxWorkers: 1})
	require.NoError(t, err)
	t.Cleanup(func() { sb.Close() })
	return sb
}
