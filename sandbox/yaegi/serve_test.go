package yaegi

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/sandbox"
)

// settledGoroutines waits until the goroutine count is at most n (the sweeper ends
// asynchronously).
func settledGoroutines(t *testing.T, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		runtime.GC() // (not require.Eventually: its own goroutines would be counted)
		if runtime.NumGoroutine() <= n {
			return
		}
	}
	t.Fatalf("goroutines left running: %d, want <= %d", runtime.NumGoroutine(), n)
}

// TestUnreachableProgramIsCollected: an unclosed program that is no longer referenced is
// collected with its interpreters (nothing of the sandbox's holds it).
func TestUnreachableProgramIsCollected(t *testing.T) {
	sb := New(Options{PoolSize: 2})
	defer sb.Close()
	base := runtime.NumGoroutine()
	collected := make(chan struct{})
	func() {
		p := compile(t, sb, benchCode)
		out, err := sb.Run(context.Background(), p, sandbox.Input{Args: benchArgs})
		require.NoError(t, err)
		assert.JSONEq(t, "3", string(out.Value))
		runtime.AddCleanup(p.(*Program).idle[0].in, func(ch chan struct{}) { close(ch) }, collected)
	}()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		runtime.GC()
		select {
		case <-collected:
			settledGoroutines(t, base)
			return
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the unreachable program's interpreter was not collected")
		}
	}
}

func TestCloseStopsCalls(t *testing.T) {
	base := runtime.NumGoroutine()
	sb := New(Options{PoolSize: 2})
	p := compile(t, sb, benchCode)
	_, err := sb.Run(context.Background(), p, sandbox.Input{Args: benchArgs})
	require.NoError(t, err)
	require.NoError(t, sb.Close())
	settledGoroutines(t, base)
	_, err = sb.Run(context.Background(), p, sandbox.Input{Args: benchArgs})
	assert.Equal(t, sandbox.KindInternal, sandbox.KindOf(err), "%v", err)
	runtime.KeepAlive(p)
}

// TestDeadlineDiscardsInterpreter checks that a call stopped at its deadline returns in time and
// that the next call gets a fresh interpreter (package state reset) rather than the stopped loop.
func TestDeadlineDiscardsInterpreter(t *testing.T) {
	sb := New(Options{PoolSize: 1})
	defer sb.Close()
	p := compile(t, sb, "package artifact\nvar n int\nfunc F(loop bool) int { n++; for loop {}; return n }")
	run := func(loop bool) (string, error) {
		b, _ := json.Marshal([]bool{loop})
		timeout := hangBound // a call that ends on its own: the deadline must not be what a loaded machine meets
		if loop {
			timeout = 50 * time.Millisecond
		}
		out, err := sb.Run(context.Background(), p, sandbox.Input{Args: b, Limits: sandbox.Limits{Timeout: timeout}})
		return string(out.Value), err
	}
	v, err := run(false)
	require.NoError(t, err)
	assert.Equal(t, "1", v)
	start := time.Now()
	_, err = run(true)
	assert.Equal(t, sandbox.KindDeadline, sandbox.KindOf(err), "%v", err)
	t.Logf("the loop ended after %v (50ms deadline)", time.Since(start))
	assert.Less(t, time.Since(start), hangBound)
	for range 3 {
		v, err = run(false)
		require.NoError(t, err)
	}
	assert.Equal(t, "3", v, "a fresh interpreter after the deadline, then reused")
}

// TestCallerCancellationStopsCall checks that cancelling the caller's context stops a running call.
func TestCallerCancellationStopsCall(t *testing.T) {
	sb := New(Options{PoolSize: 1})
	defer sb.Close()
	p := compile(t, sb, "package artifact\nfunc F() int { for {} }")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	_, err := sb.Run(ctx, p, sandbox.Input{Limits: sandbox.Limits{Timeout: 10 * time.Second}})
	assert.Equal(t, sandbox.KindDeadline, sandbox.KindOf(err), "%v", err)
	assert.Contains(t, err.Error(), "cancelled")
}

// TestNativeCodePastDeadline: a program importing math/big runs its calls detached, so that a
// native call that outlives the deadline (no interpreter stop can interrupt it) still gives the
// caller its deadline error on time; the interpreter is dropped and the next call gets a fresh one.
func TestNativeCodePastDeadline(t *testing.T) {
	sb := New(Options{PoolSize: 1})
	defer sb.Close()
	p := compile(t, sb, "package artifact\n\nimport \"math/big\"\n\nfunc Pow(e int) int { return new(big.Int).Exp(big.NewInt(3), big.NewInt(int64(e)), nil).BitLen() }\n")
	require.True(t, p.(*Program).detached)
	run := func(e int, timeout time.Duration) (string, error) {
		out, err := sb.Run(context.Background(), p, sandbox.Input{Args: json.RawMessage(fmt.Sprintf("[%d]", e)), Limits: sandbox.Limits{Timeout: timeout}})
		return string(out.Value), err
	}
	v, err := run(10, time.Second)
	require.NoError(t, err)
	assert.Equal(t, "16", v)
	// 3^(2^24): about 1.5 s of native work on an idle core.
	start := time.Now()
	_, err = run(1<<24, 50*time.Millisecond)
	took := time.Since(start)
	require.Equal(t, sandbox.KindDeadline, sandbox.KindOf(err), "%v", err)
	assert.Contains(t, err.Error(), "native code")
	t.Logf("the caller waited %v (50ms deadline; the native call alone takes about 1.5 s)", took)
	assert.Less(t, took, hangBound, "the caller waits for the deadline and the grace, not for the native call")
	assert.Equal(t, 0, poolState(p.(*Program)), "the abandoned interpreter has left the pool")
	v, err = run(10, time.Second)
	require.NoError(t, err)
	assert.Equal(t, "16", v)
}
