package wasm

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// callCtx bounds one call by its deadline without a timer on the warm path. Err compares the
// clock (tick, the guest's metering hook, asks it every fuelPerTick loop headers, so a runaway
// loop still ends at its deadline), and a timer-backed Done is made only when something waits on
// it: a host call's HTTP request or delegation, a wait for a free instance, wazero's own context
// checks. context.WithTimeout made a timer and registered a child in the caller's context (a
// lock on the request's context under load) for every call, ~5% of a loaded server's CPU.
type callCtx struct {
	context.Context           // the caller's
	deadline        time.Time // the call's own; Deadline reports the earlier of it and the caller's

	mu     sync.Mutex
	timed  atomic.Pointer[context.Context] // context.WithDeadline(caller, deadline), once Done was asked
	cancel context.CancelFunc
	ended  atomic.Bool // released: the call is over, Err is Canceled as after a WithTimeout's cancel
}

func withCallDeadline(parent context.Context, d time.Time) *callCtx {
	return &callCtx{Context: parent, deadline: d}
}

func (c *callCtx) Deadline() (time.Time, bool) {
	if d, ok := c.Context.Deadline(); ok && d.Before(c.deadline) {
		return d, true
	}
	return c.deadline, true
}

// Done returns a channel closed at the deadline or when the caller's context ends; the first
// call makes the timer behind it.
func (c *callCtx) Done() <-chan struct{} {
	if t := c.timed.Load(); t != nil {
		return (*t).Done()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if t := c.timed.Load(); t != nil {
		return (*t).Done()
	}
	t, cancel := context.WithDeadline(c.Context, c.deadline)
	c.cancel = cancel
	if c.ended.Load() {
		cancel()
	}
	c.timed.Store(&t)
	return t.Done()
}

// Err is the caller's error, else DeadlineExceeded once the deadline has passed. Once Done was
// asked for, it is that channel's context's Err, so the two agree.
func (c *callCtx) Err() error {
	if t := c.timed.Load(); t != nil {
		return (*t).Err()
	}
	if err := c.Context.Err(); err != nil {
		return err
	}
	if c.ended.Load() {
		return context.Canceled
	}
	if !time.Now().Before(c.deadline) {
		return context.DeadlineExceeded
	}
	return nil
}

// release stops the timer, if Done made one (Run's end: the cancel of a WithTimeout).
func (c *callCtx) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ended.Store(true)
	if c.cancel != nil {
		c.cancel()
	}
}
