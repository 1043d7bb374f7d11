package wasm

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/sandbox"
)

// doneCounter is a caller's context that counts who asks for its Done channel: deriving a
// timer-backed context (context.WithTimeout) from it asks, to register the child.
type doneCounter struct {
	context.Context
	asked atomic.Int32
}

func (d *doneCounter) Done() <-chan struct{} {
	d.asked.Add(1)
	return d.Context.Done()
}

// A warm call that makes no host call neither makes a timer nor registers in the caller's context
// (a request's, shared by everything the request does): its deadline is the clock the guest's
// tick reads.
func TestWarmCallMakesNoTimer(t *testing.T) {
	p := compile(t, benchCode)
	parent, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctx := &doneCounter{Context: parent}
	for range 3 {
		out, err := shared.Run(ctx, p, sandbox.Input{Args: benchArgs})
		require.NoError(t, err)
		require.Equal(t, "3", string(out.Value))
	}
	assert.Zero(t, ctx.asked.Load(), "the warm call asked the caller's context for its Done channel")
}

// A caller that cancels stops a runaway loop (the tick reads the caller's context too).
func TestCallerCancelStopsLoop(t *testing.T) {
	p := compile(t, `package artifact

func Spin(n int) int {
	for n >= 0 {
		n = (n*7 + 1) % 1000
	}
	return n
}
`)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	_, err := shared.Run(ctx, p, sandbox.Input{Args: []byte(`[1]`), Limits: sandbox.Limits{Timeout: time.Hour}})
	require.Error(t, err)
	assert.Equal(t, sandbox.KindDeadline, sandbox.KindOf(err), err.Error())
	assert.Contains(t, err.Error(), "cancelled")
}

func TestCallDeadlineContext(t *testing.T) {
	t.Run("before the deadline", func(t *testing.T) {
		c := withCallDeadline(context.Background(), time.Now().Add(time.Hour))
		defer c.release()
		assert.NoError(t, c.Err())
		d, ok := c.Deadline()
		assert.True(t, ok)
		assert.WithinDuration(t, time.Now().Add(time.Hour), d, time.Minute)
	})
	t.Run("past the deadline, Err before Done was asked", func(t *testing.T) {
		c := withCallDeadline(context.Background(), time.Now().Add(-time.Millisecond))
		defer c.release()
		assert.ErrorIs(t, c.Err(), context.DeadlineExceeded)
		<-c.Done() // closes: the timer fires at once
		assert.ErrorIs(t, c.Err(), context.DeadlineExceeded)
	})
	t.Run("Done closes at the deadline", func(t *testing.T) {
		c := withCallDeadline(context.Background(), time.Now().Add(20*time.Millisecond))
		defer c.release()
		<-c.Done()
		assert.ErrorIs(t, c.Err(), context.DeadlineExceeded)
	})
	t.Run("the caller's cancel", func(t *testing.T) {
		parent, cancel := context.WithCancel(context.Background())
		c := withCallDeadline(parent, time.Now().Add(time.Hour))
		defer c.release()
		cancel()
		assert.ErrorIs(t, c.Err(), context.Canceled)
		<-c.Done()
	})
	t.Run("the caller's earlier deadline", func(t *testing.T) {
		parent, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c := withCallDeadline(parent, time.Now().Add(time.Hour))
		defer c.release()
		pd, _ := parent.Deadline()
		d, _ := c.Deadline()
		assert.Equal(t, pd, d)
	})
	t.Run("released", func(t *testing.T) {
		c := withCallDeadline(context.Background(), time.Now().Add(time.Hour))
		c.release()
		assert.True(t, errors.Is(c.Err(), context.Canceled))
		<-c.Done() // closed: the call is over
		c2 := withCallDeadline(context.Background(), time.Now().Add(time.Hour))
		done := c2.Done()
		c2.release()
		<-done
		assert.ErrorIs(t, c2.Err(), context.Canceled)
	})
	t.Run("values pass through", func(t *testing.T) {
		type key struct{}
		c := withCallDeadline(context.WithValue(context.Background(), key{}, 7), time.Now().Add(time.Hour))
		defer c.release()
		assert.Equal(t, 7, c.Value(key{}))
	})
}

// A warm call finds its instance pool without the program's lock: concurrent calls of one method
// on a loaded server queued on it behind a preempted holder.
func TestWarmCallTakesNoProgramLock(t *testing.T) {
	p := compile(t, benchCode)
	_, err := shared.Run(context.Background(), p, sandbox.Input{Args: benchArgs})
	require.NoError(t, err)
	prog := p.(*Program)
	prog.mu.Lock()
	done := make(chan error, 1)
	go func() {
		out, err := shared.Run(context.Background(), p, sandbox.Input{Args: benchArgs})
		if err == nil && string(out.Value) != "3" {
			err = errors.New("answer " + string(out.Value))
		}
		done <- err
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(time.Minute):
		t.Fatal("a warm call waited for the program's lock")
	}
	prog.mu.Unlock()
}
