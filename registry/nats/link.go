package nats

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
)

// ErrUnreachable is wrapped by a fleet store's errors when its NATS server cannot be reached: the
// connection is down (and did not come back within reconnectGrace), or it was found dead by the
// watch and a ping. Operations that need the server fail at once with it instead of waiting out
// the operation timeout; calls of methods already in memory go on.
var ErrUnreachable = errors.New("the NATS server is unreachable")

// reconnectGrace is how long an operation that needs the server waits for a reconnection in
// progress (a failover to another node of a cluster takes about a ReconnectWait), and how long an
// operation already in flight goes on after its connection dropped. Past it, both fail with
// ErrUnreachable.
const reconnectGrace = time.Second

// link follows a fleet store's connection, so that operations know at once when the server is
// out of reach (RATIONALE.md, "Fleet store: operations when the server is unreachable").
//
//   - The connection's status changes (nats.Conn.StatusChanged) mark it down or up. While it is
//     down, ctx() waits for it at most reconnectGrace from when it went down; the context it
//     returns (the parent of every operation's context) is cancelled once the connection has been
//     down for reconnectGrace, so an operation in flight stops too.
//   - A connection can look up while its server is gone (a half-open TCP connection: a cut
//     network, a frozen machine); nats.go notices only after its pings go unanswered, minutes
//     later. The store's watch notices within about a second (its consumer misses heartbeats):
//     suspect() then pings the server (reconnectGrace) and, when no answer comes, forces a
//     reconnection, which makes the status true (reconnecting) and the rule above applies.
type link struct {
	nc *nats.Conn

	mu        sync.Mutex
	downSince time.Time       // zero while connected
	status    nats.Status     // the last status seen
	lost      context.Context // cancelled (cause: the unreachable error) while down for reconnectGrace
	cancel    context.CancelCauseFunc
	timer     *time.Timer    // cancels lost reconnectGrace after downSince
	changed   chan struct{}  // closed (and replaced) at each transition
	probing   atomic.Bool    // a suspect() ping is running
	forced    atomic.Int64   // reconnections forced after a failed ping
	wg        sync.WaitGroup // the status goroutine and pings
	statusCh  chan nats.Status
	closing   bool // set by close (under mu): no more pings start
	closeOnce sync.Once
}

// newLink follows nc's status until close.
func newLink(nc *nats.Conn) *link {
	l := &link{nc: nc, changed: make(chan struct{})}
	l.lost, l.cancel = context.WithCancelCause(context.Background())
	l.statusCh = nc.StatusChanged(nats.CONNECTED, nats.RECONNECTING, nats.DISCONNECTED, nats.CLOSED)
	l.set(nc.Status()) // a change before the listener was registered
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		for range l.statusCh {
			// Events are dropped when the channel is full: the status itself is the truth.
			l.set(nc.Status())
		}
	}()
	return l
}

// set records the connection's status s.
func (l *link) set(s nats.Status) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.status = s
	up := s == nats.CONNECTED
	switch {
	case up && !l.downSince.IsZero():
		l.downSince = time.Time{}
		l.timer.Stop()
		if l.lost.Err() != nil {
			l.lost, l.cancel = context.WithCancelCause(context.Background())
		}
	case !up && l.downSince.IsZero():
		since := time.Now()
		l.downSince = since
		wait := reconnectGrace
		if s == nats.CLOSED {
			wait = 0
		}
		cancel := l.cancel
		l.timer = time.AfterFunc(wait, func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			if l.downSince.Equal(since) {
				cancel(ErrUnreachable)
				l.notifyLocked()
			}
		})
	case s == nats.CLOSED:
		l.cancel(ErrUnreachable)
	default:
		return
	}
	l.notifyLocked()
}

func (l *link) notifyLocked() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// ctx is the parent of an operation that needs the server: when the connection is down it waits
// until it is back or has been down for reconnectGrace; the context is then cancelled as soon as
// the server is unreachable (at once if it already is).
func (l *link) ctx() context.Context {
	for {
		l.mu.Lock()
		lost, ch, down := l.lost, l.changed, !l.downSince.IsZero()
		l.mu.Unlock()
		if !down || lost.Err() != nil {
			return lost
		}
		<-ch // back up, or down for reconnectGrace: both are transitions
	}
}

// unreachable is why the server cannot be reached (wrapping ErrUnreachable), or nil while the
// connection is up or within reconnectGrace of going down.
func (l *link) unreachable() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lost.Err() == nil {
		return nil
	}
	if l.status == nats.CLOSED {
		return fmt.Errorf("%w: the connection is closed", ErrUnreachable)
	}
	return fmt.Errorf("%w: the connection has been down for %v (%s)", ErrUnreachable, time.Since(l.downSince).Round(time.Millisecond), strings.ToLower(l.status.String()))
}

// down is why an operation that failed on a connection error failed, when the connection is down
// now (even within reconnectGrace: a request cleared by the drop), else nil. It does not wait.
func (l *link) down() error {
	if l.nc != nil {
		l.set(l.nc.Status()) // the status listener may not have heard of the drop yet
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.downSince.IsZero() {
		return nil
	}
	return fmt.Errorf("%w: the connection has been down for %v (%s)", ErrUnreachable, time.Since(l.downSince).Round(time.Millisecond), strings.ToLower(l.status.String()))
}

// suspect is the watch's report that the server may be gone (its consumer missed heartbeats, or
// the stream could not be asked): ping the server and, when it does not answer within
// reconnectGrace on a connection that looks up, force a reconnection (see link). One ping at a
// time; it runs in the background.
func (l *link) suspect() {
	if !l.nc.IsConnected() || !l.probing.CompareAndSwap(false, true) {
		return
	}
	l.mu.Lock()
	if l.closing {
		l.mu.Unlock()
		l.probing.Store(false)
		return
	}
	l.wg.Add(1) // under mu, so never while close waits
	l.mu.Unlock()
	go func() {
		defer l.wg.Done()
		defer l.probing.Store(false)
		if err := l.nc.FlushTimeout(reconnectGrace); err != nil && l.nc.IsConnected() {
			if l.nc.ForceReconnect() == nil {
				l.forced.Add(1)
			}
		}
	}()
}

// close stops following the connection (call it before or after closing the connection).
func (l *link) close() {
	l.closeOnce.Do(func() {
		l.mu.Lock()
		l.closing = true
		l.mu.Unlock()
		l.nc.RemoveStatusListener(l.statusCh)
		l.wg.Wait()
		l.mu.Lock()
		if l.timer != nil {
			l.timer.Stop()
		}
		l.cancel(ErrUnreachable)
		l.mu.Unlock()
	})
}
