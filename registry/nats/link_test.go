package nats

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// testLink is a link fed by hand (no connection): the tests drive its status.
func testLink() *link {
	l := &link{changed: make(chan struct{})}
	l.lost, l.cancel = context.WithCancelCause(context.Background())
	l.set(nats.CONNECTED)
	return l
}

// TestLinkGrace: an operation that starts while the connection is down waits for a reconnection
// in progress and goes on if it comes within the grace; otherwise it gets a cancelled context
// (cause ErrUnreachable), as do operations already running, until the connection is back. The
// time bounds only catch hangs.
func TestLinkGrace(t *testing.T) {
	l := testLink()
	if ctx := l.ctx(); ctx.Err() != nil || l.unreachable() != nil {
		t.Fatalf("connected: ctx %v, unreachable %v", ctx.Err(), l.unreachable())
	}

	// Down, back within the grace: the waiting operation goes on with a live context.
	running := l.ctx() // an operation already running
	l.set(nats.RECONNECTING)
	var back atomic.Bool
	go func() { time.Sleep(100 * time.Millisecond); back.Store(true); l.set(nats.CONNECTED) }()
	got := make(chan context.Context, 1)
	go func() { got <- l.ctx() }()
	select {
	case ctx := <-got:
		if ctx.Err() != nil {
			t.Fatalf("a reconnection within the grace failed the waiting operation: %v", context.Cause(ctx))
		}
		if !back.Load() {
			t.Fatal("an operation started while the connection was down did not wait for it")
		}
	case <-time.After(hangBound):
		t.Fatal("an operation waits for the reconnection beyond any bound")
	}
	if running.Err() != nil || l.unreachable() != nil {
		t.Fatalf("a drop shorter than the grace cancelled a running operation: %v", context.Cause(running))
	}

	// Down for good: after the grace the running operation is cancelled, a new one fails at once.
	running = l.ctx()
	l.set(nats.RECONNECTING)
	select {
	case <-running.Done():
	case <-time.After(hangBound):
		t.Fatal("a running operation is not cancelled once the connection stays down")
	}
	if !errors.Is(context.Cause(running), ErrUnreachable) {
		t.Fatalf("cause %v, want ErrUnreachable", context.Cause(running))
	}
	if err := l.unreachable(); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("unreachable: %v", err)
	}
	if err := l.down(); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("down: %v", err)
	}
	if ctx := l.ctx(); ctx.Err() == nil {
		t.Fatal("a new operation is not failed at once while unreachable")
	}

	// Back: new operations get a live context again.
	l.set(nats.CONNECTED)
	if ctx := l.ctx(); ctx.Err() != nil || l.unreachable() != nil || l.down() != nil {
		t.Fatalf("reconnected: ctx %v, unreachable %v", ctx.Err(), l.unreachable())
	}

	// Closed: at once, with no grace.
	l.set(nats.CLOSED)
	select {
	case <-l.ctx().Done():
	case <-time.After(hangBound):
		t.Fatal("a closed connection is not unreachable")
	}
}
