package wasm

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/sandbox"
)

// addCode is a new program for each n (a regeneration's new code).
func addCode(n int) string {
	return fmt.Sprintf("package artifact\n\nfunc Add(x int) int { return x + %d }\n", n)
}

func runAdd(t *testing.T, s *Sandbox, p sandbox.Program, x, want int) {
	t.Helper()
	out, err := s.Run(context.Background(), p, sandbox.Input{Args: json.RawMessage(fmt.Sprintf(`{"x":%d}`, x))})
	require.NoError(t, err)
	assert.JSONEq(t, fmt.Sprint(want), string(out.Value))
}

// TestRegenerationsGiveBackModules replaces a method's program ten times, closing the old one
// each time as the forge does: the live modules and instances stay those of one program, and
// none remain after the last Close.
func TestRegenerationsGiveBackModules(t *testing.T) {
	s, err := New(Options{CacheDir: testCacheDir, IdleTimeout: -1})
	require.NoError(t, err)
	defer s.Close()
	ctx := context.Background()
	require.Equal(t, LiveCounts{}, s.Live())
	var old sandbox.Program
	for i := range 11 { // the first program and ten regenerations
		p, err := s.Compile(ctx, sandbox.Source{Code: addCode(i), Func: "Add"})
		require.NoError(t, err)
		runAdd(t, s, p, 1, 1+i)
		if old != nil {
			require.NoError(t, old.Close())
		}
		old = p
		live := s.Live()
		assert.Equal(t, 1, live.Programs, "after regeneration %d", i)
		assert.Equal(t, 1, live.Modules, "after regeneration %d", i)
		assert.Equal(t, 1, live.Instances, "after regeneration %d", i)
		assert.Positive(t, p.(*Program).LiveBytes())
	}
	require.NoError(t, old.Close())
	assert.Equal(t, LiveCounts{}, s.Live(), "the last Close gives everything back")
	_, err = s.Run(ctx, old, sandbox.Input{Args: json.RawMessage(`{"x":1}`)})
	assert.Equal(t, sandbox.KindInternal, sandbox.AsError(err).Kind, "a run after Close is refused")
}

// TestSharedProgramClosesAtLastClose: two Compile results of one code share a program and its
// module; the first Close leaves it running, the second gives it back.
func TestSharedProgramClosesAtLastClose(t *testing.T) {
	s, err := New(Options{CacheDir: testCacheDir, IdleTimeout: -1})
	require.NoError(t, err)
	defer s.Close()
	ctx := context.Background()
	src := sandbox.Source{Code: addCode(0), Func: "Add"}
	var progs [4]sandbox.Program
	var wg sync.WaitGroup
	errs := make([]error, len(progs))
	for i := range progs { // concurrent compiles of one code: one program, one module
		wg.Go(func() { progs[i], errs[i] = s.Compile(ctx, src) })
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	assert.Equal(t, 1, s.Live().Programs)
	assert.Equal(t, 1, s.Live().Modules)
	for i, p := range progs[:3] {
		require.NoError(t, p.Close())
		runAdd(t, s, progs[3], i, i)
	}
	require.NoError(t, progs[3].Close())
	assert.Equal(t, LiveCounts{}, s.Live())
}

// TestIdlePoolShrinks: instances made for concurrent calls are closed once they idle longer
// than IdleTimeout; one stays warm.
func TestIdlePoolShrinks(t *testing.T) {
	s, err := New(Options{CacheDir: testCacheDir, IdleTimeout: 100 * time.Millisecond, PoolSize: 4})
	require.NoError(t, err)
	defer s.Close()
	ctx := context.Background()
	p, err := s.Compile(ctx, sandbox.Source{Code: `package artifact

import "forge/host"

func Wait(n int) (int, error) {
	var r int
	err := host.CallInto("b", "w", map[string]int{"n": n}, &r)
	return r + n, err
}
`, Func: "Wait"})
	require.NoError(t, err)
	defer p.Close()
	// Four calls in flight at once (each waits in its host call for the others): four instances.
	var all sync.WaitGroup
	all.Add(4)
	in := sandbox.Input{Args: json.RawMessage(`{"n":1}`), Caps: sandbox.Capabilities{Call: true},
		Call: func(context.Context, string, string, json.RawMessage) (json.RawMessage, error) {
			all.Done()
			all.Wait()
			return json.RawMessage(`1`), nil
		}}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			out, err := s.Run(ctx, p, in)
			if assert.NoError(t, err) {
				assert.JSONEq(t, `2`, string(out.Value))
			}
		})
	}
	wg.Wait()
	require.Equal(t, 4, s.Live().Instances, "four concurrent calls, four instances")
	big := p.(*Program).LiveBytes()
	deadline := time.Now().Add(20 * time.Second)
	for s.Live().Instances > 1 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	assert.Equal(t, 1, s.Live().Instances, "idle instances beyond the first are closed")
	assert.Equal(t, int64(3), s.Live().Trimmed)
	assert.Less(t, p.(*Program).LiveBytes(), big)
	time.Sleep(400 * time.Millisecond)
	assert.Equal(t, 1, s.Live().Instances, "one instance stays warm")
	single := in
	single.Call = func(context.Context, string, string, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`1`), nil
	}
	out, err := s.Run(ctx, p, single)
	require.NoError(t, err)
	assert.JSONEq(t, `2`, string(out.Value))
}
