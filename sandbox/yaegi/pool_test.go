package yaegi

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/sandbox"
)

// eventually polls cond (bounded: only to detect a hang) without goroutines of its own.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("still waiting for: %s", what)
}

// poolState is the program's live interpreters.
func poolState(p *Program) (live int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.sem)
}

const counterCode = `package artifact

var calls int

func Next() int { calls++; return calls }
`

// TestCalledProgramHoldsNoGoroutine: a program's calls run on the caller's goroutine; between
// calls, and after the sweeper has nothing left to do, the program holds no goroutine, and its
// one interpreter keeps its package state from call to call.
func TestCalledProgramHoldsNoGoroutine(t *testing.T) {
	sb := New(Options{IdleTimeout: 20 * time.Millisecond})
	defer sb.Close()
	p := compile(t, sb, counterCode)
	prog := p.(*Program)
	run := func() string {
		out, err := sb.Run(context.Background(), p, sandbox.Input{Args: json.RawMessage(`[]`)})
		require.NoError(t, err)
		return string(out.Value)
	}
	base := runtime.NumGoroutine()
	assert.Equal(t, "1", run())
	assert.Equal(t, base, runtime.NumGoroutine(), "a call leaves no goroutine behind")
	assert.False(t, prog.armed.Load(), "a program with one interpreter is not in the sweep set")
	assert.Equal(t, "2", run(), "the same interpreter (and its package state) serves the next call")
	assert.Equal(t, "3", run())
	assert.Equal(t, 1, poolState(prog))
	assert.Equal(t, base, runtime.NumGoroutine())
}

// TestIdleInterpretersTrimmed: interpreters made for concurrent calls are ended once idle for
// IdleTimeout, all but the first; the program still answers.
func TestIdleInterpretersTrimmed(t *testing.T) {
	sb := New(Options{PoolSize: 4, IdleTimeout: 200 * time.Millisecond})
	defer sb.Close()
	p := compile(t, sb, `package artifact

func Spin(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i % 7
	}
	return s
}
`)
	prog := p.(*Program)
	// Four calls at once: four interpreters.
	var held []*instance
	for range 4 {
		inst, err := prog.get(context.Background(), time.Second)
		require.NoError(t, err)
		held = append(held, inst)
	}
	for _, inst := range held {
		inst.used = time.Now()
		prog.put(inst, true)
	}
	live := poolState(prog)
	require.Equal(t, 4, live)
	eventually(t, "idle interpreters beyond the first end", func() bool { live := poolState(prog); return live == 1 })
	out, err := sb.Run(context.Background(), p, sandbox.Input{Args: json.RawMessage(`[10]`)})
	require.NoError(t, err)
	assert.Equal(t, "24", string(out.Value))
}

// TestPoolIsLIFO: sequential calls use the most recently used interpreter, so that the others
// stay idle long enough to be trimmed.
func TestPoolIsLIFO(t *testing.T) {
	sb := New(Options{PoolSize: 3, IdleTimeout: -1})
	defer sb.Close()
	prog := compile(t, sb, counterCode).(*Program)
	ctx := context.Background()
	var held []*instance
	for range 3 {
		inst, err := prog.get(ctx, time.Second)
		require.NoError(t, err)
		held = append(held, inst)
	}
	for _, inst := range held {
		prog.put(inst, true)
	}
	for range 5 {
		inst, err := prog.get(ctx, time.Second)
		require.NoError(t, err)
		assert.Same(t, held[2], inst, "the last one put back is taken first")
		prog.put(inst, true)
	}
}

// TestTrimUnderLoad: calls racing the sweeper (which trims after 3 ms idle) always get a working
// interpreter and the right answer. Run it with -race.
func TestTrimUnderLoad(t *testing.T) {
	sb := New(Options{PoolSize: 2, IdleTimeout: 3 * time.Millisecond})
	defer sb.Close()
	p := compile(t, sb, benchCode)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 150 {
				out, err := sb.Run(context.Background(), p, sandbox.Input{Args: json.RawMessage(fmt.Sprintf("[%d, %d]", g, i))})
				if !assert.NoError(t, err) {
					return
				}
				assert.Equal(t, fmt.Sprint(g+i), string(out.Value))
				if i%10 == 0 {
					time.Sleep(time.Duration(i%4) * time.Millisecond)
				}
			}
		}()
	}
	wg.Wait()
}

// TestCloseStopsIsolatedWorkers: closing an isolated program stops its worker process, unless
// another live program of the same code still uses it.
func TestCloseStopsIsolatedWorkers(t *testing.T) {
	sb := New(Options{Isolation: sandbox.IsolationProcess})
	defer sb.Close()
	total := func() int {
		sb.workers.mu.Lock()
		defer sb.workers.mu.Unlock()
		return sb.workers.total
	}
	ctx := context.Background()
	a := compile(t, sb, benchCode)
	b := compile(t, sb, benchCode)
	for _, p := range []sandbox.Program{a, b} {
		out, err := sb.Run(ctx, p, sandbox.Input{Args: benchArgs})
		require.NoError(t, err)
		assert.Equal(t, "3", string(out.Value))
	}
	live := total()
	require.GreaterOrEqual(t, live, 1)
	require.NoError(t, a.Close())
	assert.Equal(t, live, total(), "b still uses the workers of the same code")
	out, err := sb.Run(ctx, b, sandbox.Input{Args: benchArgs})
	require.NoError(t, err)
	assert.Equal(t, "3", string(out.Value))
	require.NoError(t, b.Close())
	assert.Equal(t, 0, total(), "the last Close stops the program's workers")
	require.NoError(t, b.Close(), "Close is idempotent")
}

// TestCloseDuringCall: a program closed while a call is in flight answers that call, then ends
// the interpreter instead of pooling it.
func TestCloseDuringCall(t *testing.T) {
	sb := New(Options{})
	defer sb.Close()
	prog := compile(t, sb, counterCode).(*Program)
	inst, err := prog.get(context.Background(), time.Second)
	require.NoError(t, err)
	require.NoError(t, prog.Close())
	prog.put(inst, true)
	prog.mu.Lock()
	defer prog.mu.Unlock()
	assert.Empty(t, prog.idle)
	assert.Equal(t, 0, len(prog.sem))
}

// TestIdleWorkersTrimmed: worker processes started for concurrent isolated calls are stopped
// once idle for IdleTimeout, all but one per program; the program still answers.
func TestIdleWorkersTrimmed(t *testing.T) {
	sb := New(Options{Isolation: sandbox.IsolationProcess, IdleTimeout: 150 * time.Millisecond, Worker: WorkerConfig{Max: 3}})
	defer sb.Close()
	total := func() int {
		sb.workers.mu.Lock()
		defer sb.workers.mu.Unlock()
		return sb.workers.total
	}
	p := compile(t, sb, `package artifact

func Spin(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i % 7
	}
	return s
}
`)
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := sb.Run(context.Background(), p, sandbox.Input{Args: json.RawMessage(`[2000000]`), Limits: sandbox.Limits{Timeout: time.Minute}})
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
	require.Greater(t, total(), 1, "concurrent isolated calls started more workers")
	eventually(t, "idle workers beyond one end", func() bool { return total() == 1 })
	out, err := sb.Run(context.Background(), p, sandbox.Input{Args: json.RawMessage(`[10]`)})
	require.NoError(t, err)
	assert.Equal(t, "24", string(out.Value))
}
