package native

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/sandboxtest"
)

func TestAdd(t *testing.T) {
	ctx := context.Background()
	p, err := shared.Compile(ctx, sandbox.Source{Code: "package main\n\nfunc Add(a, b int) int { return a + b }\n"})
	require.NoError(t, err)
	defer p.Close()
	out, err := shared.Run(ctx, p, sandbox.Input{Args: json.RawMessage(`[2, 3]`)})
	require.NoError(t, err)
	assert.JSONEq(t, "5", string(out.Value))
	out, err = shared.Run(ctx, p, sandbox.Input{Args: json.RawMessage(`{"a": 40, "b": 2}`)})
	require.NoError(t, err)
	assert.JSONEq(t, "42", string(out.Value))
}

// TestMemoryCapHolds: under a 64 MB cap a call may hold 32 MB, and one that holds 96 MB fails as
// KindMemory (RLIMIT_DATA: what the worker held at its lockdown plus the cap and 32 MB).
func TestMemoryCapHolds(t *testing.T) {
	ctx := context.Background()
	p, err := shared.Compile(ctx, sandbox.Source{Code: `package artifact

func Hold(mb int) int {
	b := make([]byte, mb<<20)
	for i := range b {
		b[i] = byte(i)
	}
	return len(b) >> 20
}
`})
	require.NoError(t, err)
	defer p.Close()
	lim := sandbox.Limits{MemoryBytes: 64 << 20}
	out, err := shared.Run(ctx, p, sandbox.Input{Args: json.RawMessage(`[32]`), Limits: lim})
	require.NoError(t, err)
	assert.JSONEq(t, "32", string(out.Value))
	_, err = shared.Run(ctx, p, sandbox.Input{Args: json.RawMessage(`[96]`), Limits: lim})
	assert.Equal(t, sandbox.KindMemory, sandbox.KindOf(err), "%v", err)
	out, err = shared.Run(ctx, p, sandbox.Input{Args: json.RawMessage(`[1]`), Limits: lim})
	require.NoError(t, err, "the dead worker is replaced")
	assert.JSONEq(t, "1", string(out.Value))
}

// TestMaxWorkersEvictsIdle: with room for one worker in all, two programs called in turn each
// end the other's idle worker to start their own, and a call to a busy program's pool waits for
// its worker instead of failing.
func TestMaxWorkersEvictsIdle(t *testing.T) {
	sb, err := New(Options{CacheDir: sandboxtest.BuildCacheDir(), PoolSize: 1, MaxWorkers: 1})
	require.NoError(t, err)
	defer sb.Close()
	ctx := context.Background()
	add, err := sb.Compile(ctx, sandbox.Source{Code: "package artifact\n\nfunc Add(a, b int) int { return a + b }\n"})
	require.NoError(t, err)
	defer add.Close()
	neg, err := sb.Compile(ctx, sandbox.Source{Code: "package artifact\n\nfunc Neg(a int) int { return -a }\n"})
	require.NoError(t, err)
	defer neg.Close()
	for i := range 3 {
		out, err := sb.Run(ctx, add, sandbox.Input{Args: json.RawMessage(`[1, 2]`)})
		require.NoError(t, err, "round %d", i)
		assert.JSONEq(t, "3", string(out.Value))
		out, err = sb.Run(ctx, neg, sandbox.Input{Args: json.RawMessage(`[5]`)})
		require.NoError(t, err, "round %d", i)
		assert.JSONEq(t, "-5", string(out.Value))
		sb.mu.Lock()
		live := sb.live
		sb.mu.Unlock()
		assert.Equal(t, 1, live, "MaxWorkers holds")
	}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = sb.Run(ctx, add, sandbox.Input{Args: json.RawMessage(`[1, 2]`)})
		}()
	}
	wg.Wait()
	for _, err := range errs {
		assert.NoError(t, err)
	}
}

// TestPrintsAreTheCallsLogs: what a call prints on stdout is its logs (Log granted), every line,
// in order, and none of them reaches another call.
func TestPrintsAreTheCallsLogs(t *testing.T) {
	ctx := context.Background()
	p, err := shared.Compile(ctx, sandbox.Source{Code: `package artifact

import "fmt"

func Say(n int) int {
	for i := range n {
		fmt.Println("line", i)
	}
	fmt.Print("no newline")
	return n
}
`})
	require.NoError(t, err)
	defer p.Close()
	for n := range 20 {
		out, err := shared.Run(ctx, p, sandbox.Input{Args: json.RawMessage(strconv.Itoa(n)), Caps: sandbox.Capabilities{Log: true}})
		require.NoError(t, err)
		want := []string{}
		for i := range n {
			want = append(want, fmt.Sprint("line ", i))
		}
		want = append(want, "no newline")
		assert.Equal(t, want, out.Logs, "call %d", n)
	}
}

// TestIdleWorkersTrimmed: workers idle past the idle timeout are ended, but for the pool's last.
func TestIdleWorkersTrimmed(t *testing.T) {
	sb, err := New(Options{CacheDir: sandboxtest.BuildCacheDir(), PoolSize: 3, IdleTimeout: -1})
	require.NoError(t, err)
	defer sb.Close()
	ctx := context.Background()
	p, err := sb.Compile(ctx, sandbox.Source{Code: "package artifact\n\nfunc Add(a, b int) int { return a + b }\n"})
	require.NoError(t, err)
	defer p.Close()
	pl := p.(*Program).pool(sandbox.DefaultMemoryBytes)
	var ws []*worker
	for range 3 {
		w, err := sb.get(ctx, pl, time.Second)
		require.NoError(t, err)
		ws = append(ws, w)
	}
	for _, w := range ws {
		sb.put(pl, w)
	}
	assert.Equal(t, 0, sb.trim(time.Now().Add(-time.Hour)), "none idle long enough")
	assert.Equal(t, 2, sb.trim(time.Now().Add(time.Hour)))
	assert.Equal(t, 0, sb.trim(time.Now().Add(time.Hour)), "the pool keeps one")
	out, err := sb.Run(ctx, p, sandbox.Input{Args: json.RawMessage(`[1, 2]`)})
	require.NoError(t, err)
	assert.JSONEq(t, "3", string(out.Value))
}
