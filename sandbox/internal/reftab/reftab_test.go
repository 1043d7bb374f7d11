package reftab

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/sandbox"
)

type val struct{ n int }

func TestProgramKeySeparatesClients(t *testing.T) {
	a := sandbox.Source{Code: "package p\nfunc F() int { return 1 }", Func: "F"}
	b := a
	b.Client = "tenant-b"
	c := a
	c.Func = "G"
	assert.NotEqual(t, ProgramKey(a), ProgramKey(b), "one program per client")
	assert.NotEqual(t, ProgramKey(a), ProgramKey(c), "one program per function")
	a2 := a
	a2.Limits.MemoryBytes = 1 << 20
	assert.Equal(t, ProgramKey(a), ProgramKey(a2), "limits do not split programs (pools do)")
}

// TestAcquireRelease walks a value's life: made once, shared, ended by its last release only.
func TestAcquireRelease(t *testing.T) {
	var tab Table[*val]
	makes := 0
	mk := func() (*val, error) { makes++; return &val{makes}, nil }
	never := func(*val) { t.Fatal("nothing raced") }
	steps := []struct {
		op       string // "acquire" or "release"
		wantLast bool
		wantLen  int
	}{
		{"acquire", false, 1},
		{"acquire", false, 1},
		{"release", false, 1},
		{"release", true, 0},
		{"acquire", false, 1}, // made again after the last release
		{"release", true, 0},
	}
	var cur *val
	for i, st := range steps {
		switch st.op {
		case "acquire":
			v, err := tab.Acquire("k", mk, never)
			require.NoError(t, err)
			cur = v
		case "release":
			assert.Equal(t, st.wantLast, tab.Release("k", cur), "step %d", i)
		}
		assert.Equal(t, st.wantLen, tab.Len(), "step %d", i)
	}
	assert.Equal(t, 2, makes)
}

func TestAcquireErrorRegistersNothing(t *testing.T) {
	var tab Table[*val]
	boom := errors.New("boom")
	_, err := tab.Acquire("k", func() (*val, error) { return nil, boom }, func(*val) {})
	require.ErrorIs(t, err, boom)
	assert.Zero(t, tab.Len())
	_, ok := tab.Get("k")
	assert.False(t, ok)
}

// TestReleaseOfAStranger: a value the table does not hold (a make that lost its race, or one of
// a cleared table) is the caller's to end.
func TestReleaseOfAStranger(t *testing.T) {
	var tab Table[*val]
	held, _ := tab.Acquire("k", func() (*val, error) { return &val{1}, nil }, nil)
	assert.True(t, tab.Release("k", &val{2}), "not the registered value")
	assert.True(t, tab.Release("other", held), "not under that key")
	assert.Equal(t, 1, tab.Len(), "the registered value keeps its reference")
	assert.Equal(t, []*val{held}, tab.Clear())
	assert.True(t, tab.Release("k", held), "cleared: the caller ends it")
	assert.Empty(t, tab.Values())
}

// TestRacingMakesShareOneValue: makes of one key that overlap leave one value registered, every
// caller holding it, and the others discarded.
func TestRacingMakesShareOneValue(t *testing.T) {
	var tab Table[*val]
	const n = 16
	var gate sync.WaitGroup
	gate.Add(n)
	var discarded atomic.Int32
	got := make([]*val, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := tab.Acquire("k", func() (*val, error) {
				gate.Done()
				gate.Wait() // every make runs before any registers
				return &val{i}, nil
			}, func(*val) { discarded.Add(1) })
			require.NoError(t, err)
			got[i] = v
		}()
	}
	wg.Wait()
	assert.Equal(t, int32(n-1), discarded.Load())
	for _, v := range got {
		assert.Same(t, got[0], v)
	}
	for i := range n {
		assert.Equal(t, i == n-1, tab.Release("k", got[i]))
	}
}

type prog struct {
	n      int
	closed bool
}

func (p *prog) Close() error { p.closed = true; return nil }

// TestCompile: a closed sandbox makes nothing; otherwise one program per key, made once.
func TestCompile(t *testing.T) {
	var tab Table[*prog]
	src := sandbox.Source{Code: "package p\nfunc F() int { return 1 }", Func: "F"}
	makes := 0
	mk := func(key string) (*prog, error) {
		assert.Equal(t, ProgramKey(src), key)
		makes++
		return &prog{n: makes}, nil
	}
	_, err := Compile(&tab, "test", true, src, mk)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "test: sandbox closed")
	assert.Equal(t, sandbox.KindInternal, sandbox.KindOf(err))
	a, err := Compile(&tab, "test", false, src, mk)
	require.NoError(t, err)
	b, err := Compile(&tab, "test", false, src, mk)
	require.NoError(t, err)
	assert.Same(t, a, b)
	assert.Equal(t, 1, makes)
}
