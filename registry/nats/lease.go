package nats

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Leases are fleet-wide mutual exclusion with expiry, for "one generation of a method across the
// fleet": a lease is a key in NAME_leases created only if absent (a compare-and-set on the key's
// last revision) with a per-key TTL; its holder renews it (a compare-and-set on its own revision,
// which also restarts the TTL) and deletes it when done. A holder that crashes stops renewing and
// the server removes the key when the TTL runs out, so the next Acquire succeeds.
type Leases struct {
	kv     jetstream.KeyValue
	js     jetstream.JetStream
	holder string
}

// MinLeaseTTL is the shortest lease: the server counts message TTLs in whole seconds.
const MinLeaseTTL = time.Second

// LeaseRecord is a lease key's value.
type LeaseRecord struct {
	Holder   string    `json:"holder"`
	Acquired time.Time `json:"acquired"`
	TTL      string    `json:"ttl"`
}

// Lease is one held lease. Renew it more often than its TTL (KeepAlive does), Release it when done.
type Lease struct {
	ls   *Leases
	name string
	key  string
	ttl  time.Duration
	val  []byte

	renewMu   sync.Mutex // serializes renewals and the release's delete
	mu        sync.Mutex // guards the fields below
	rev       uint64
	renewedAt time.Time // when the last successful write (create or renew) was sent
	lost      bool
	lostCh    chan struct{}
	stopKeep  chan struct{}
	keepDone  chan struct{}
}

// ErrLeaseLost is returned by Renew (and closes Lost) when the lease expired or was taken: the
// holder must stop what the lease protects.
var ErrLeaseLost = errors.New("lease lost")

// ErrLeaseHeld is returned by TryAcquire when another holder has the lease.
var ErrLeaseHeld = errors.New("lease held by another holder")

func (l *Leases) key(name string) (string, error) {
	tok, err := EscapeToken(name)
	if err != nil {
		return "", err
	}
	return "gen." + tok, nil
}

// GenerationLeaseName is the lease name for generating role.method.
func GenerationLeaseName(role, method string) string { return role + "." + method }

func roundTTL(ttl time.Duration) time.Duration {
	if ttl < MinLeaseTTL {
		return MinLeaseTTL
	}
	return (ttl + time.Second - 1).Truncate(time.Second)
}

// TryAcquire takes the lease name for ttl (rounded up to whole seconds, at least MinLeaseTTL) if
// nobody holds it, else returns ErrLeaseHeld with the holder's record.
func (l *Leases) TryAcquire(ctx context.Context, name string, ttl time.Duration) (*Lease, error) {
	key, err := l.key(name)
	if err != nil {
		return nil, err
	}
	ttl = roundTTL(ttl)
	val, _ := json.Marshal(LeaseRecord{Holder: l.holder, Acquired: time.Now().UTC(), TTL: ttl.String()})
	sent := time.Now()
	rev, err := l.kv.Create(ctx, key, val, jetstream.KeyTTL(ttl))
	if err == nil {
		return &Lease{ls: l, name: name, key: key, ttl: ttl, val: val, rev: rev, renewedAt: sent, lostCh: make(chan struct{})}, nil
	}
	if isRevisionMismatch(err) {
		holder := "?"
		if e, gerr := l.kv.Get(ctx, key); gerr == nil {
			var rec LeaseRecord
			if json.Unmarshal(e.Value(), &rec) == nil {
				holder = rec.Holder
			}
		}
		return nil, fmt.Errorf("nats: lease %s: %w (%s)", name, ErrLeaseHeld, holder)
	}
	return nil, fmt.Errorf("nats: lease %s: %w (is the NATS server reachable?)", name, err)
}

// Acquire waits until it holds the lease name (or ctx ends). It watches the lease key, so a
// release or an expiry is acted on at once, and polls every leasePoll(ttl) in case a notification
// is missed.
func (l *Leases) Acquire(ctx context.Context, name string, ttl time.Duration) (*Lease, error) {
	key, err := l.key(name)
	if err != nil {
		return nil, err
	}
	// Uncontended: one create. Otherwise watch the key, then try again (a release between the
	// first try and the watch is not missed: the second try sees it).
	if le, err := l.TryAcquire(ctx, name, ttl); err == nil {
		return le, nil
	} else if ctx.Err() != nil {
		return nil, err
	}
	w, err := l.kv.Watch(ctx, key, jetstream.UpdatesOnly())
	if err != nil {
		return nil, fmt.Errorf("nats: lease %s: watch: %w (is the NATS server reachable?)", name, err)
	}
	defer func() { stopWatch(w, ctx.Err() != nil) }()
	poll := time.NewTimer(0)
	defer poll.Stop()
	for {
		le, err := l.TryAcquire(ctx, name, ttl)
		if err == nil {
			return le, nil
		}
		if !errors.Is(err, ErrLeaseHeld) && ctx.Err() != nil {
			return nil, err
		}
		// A transient error (a node failing over) is retried like a held lease.
		poll.Reset(leasePoll(ttl))
	wait:
		for {
			select {
			case e, ok := <-w.Updates():
				if !ok {
					return nil, fmt.Errorf("nats: lease %s: watch ended (connection closed?)", name)
				}
				if e != nil && e.Operation() != jetstream.KeyValuePut {
					break wait // released or expired
				}
			case <-poll.C:
				break wait
			case <-ctx.Done():
				return nil, fmt.Errorf("nats: lease %s: %w while waiting for the holder (%v)", name, ctx.Err(), err)
			}
		}
	}
}

// stopWatch stops a KV watcher. When the wait on it failed (its context ended or the store did
// not answer), often because the connection is down, Stop waits out the JetStream API timeout
// (seen: a generation lock waiter returned 4 s after its context ended), so it then runs on a
// goroutine of its own, which ends with that timeout.
func stopWatch(w jetstream.KeyWatcher, failed bool) {
	if failed {
		go w.Stop()
		return
	}
	_ = w.Stop()
}

func leasePoll(ttl time.Duration) time.Duration {
	p := ttl / 4
	if p < 50*time.Millisecond {
		p = 50 * time.Millisecond
	}
	if p > 500*time.Millisecond {
		p = 500 * time.Millisecond
	}
	return p
}

// Name is the lease's name.
func (le *Lease) Name() string { return le.name }

// TTL is the lease's TTL (whole seconds).
func (le *Lease) TTL() time.Duration { return le.ttl }

// Revision is the lease key's revision at the last create or renew. It grows with every holder and
// renewal, so it can fence writes made under the lease (compare it in the protected record).
func (le *Lease) Revision() uint64 {
	le.mu.Lock()
	defer le.mu.Unlock()
	return le.rev
}

// Valid reports whether the lease is still certainly held: not lost, and its last renewal was sent
// less than TTL ago (measured from before the write, so a slow acknowledgement shortens it).
func (le *Lease) Valid() bool {
	le.mu.Lock()
	defer le.mu.Unlock()
	return !le.lost && time.Since(le.renewedAt) < le.ttl
}

// Lost is closed when the lease is known lost (a renewal found someone else's revision, or
// KeepAlive could not renew within the TTL).
func (le *Lease) Lost() <-chan struct{} { return le.lostCh }

func (le *Lease) markLost() {
	if !le.lost {
		le.lost = true
		close(le.lostCh)
	}
}

// Renew restarts the lease's TTL. ErrLeaseLost if it expired or someone else holds it now (a renewal
// never revives an expired lease: the key's revision has moved on).
func (le *Lease) Renew(ctx context.Context) error {
	le.renewMu.Lock() // one renewal at a time: two with the same revision would fail each other
	defer le.renewMu.Unlock()
	le.mu.Lock()
	lost, rev, renewedAt := le.lost, le.rev, le.renewedAt
	le.mu.Unlock()
	if lost {
		return fmt.Errorf("nats: lease %s: %w", le.name, ErrLeaseLost)
	}
	sent := time.Now()
	msg := &nats.Msg{Subject: "$KV." + le.ls.kv.Bucket() + "." + le.key, Data: le.val}
	ack, err := le.ls.js.PublishMsg(ctx, msg, jetstream.WithExpectLastSequencePerSubject(rev), jetstream.WithMsgTTL(le.ttl))
	le.mu.Lock()
	defer le.mu.Unlock()
	if isRevisionMismatch(err) {
		le.markLost()
		return fmt.Errorf("nats: lease %s: %w (it expired or another holder took it)", le.name, ErrLeaseLost)
	}
	if err != nil {
		return fmt.Errorf("nats: lease %s: renew: %w (still held until %v unless renewed)", le.name, err, renewedAt.Add(le.ttl).Format(time.RFC3339Nano))
	}
	if le.lost { // released meanwhile: the renewal wrote a lease nobody holds; it expires with its TTL
		return fmt.Errorf("nats: lease %s: %w (released during the renewal)", le.name, ErrLeaseLost)
	}
	le.rev, le.renewedAt = ack.Sequence, sent
	return nil
}

// KeepAlive renews the lease every TTL/3 in the background until Release; if it cannot renew
// before the TTL runs out, it closes Lost.
func (le *Lease) KeepAlive() {
	le.mu.Lock()
	if le.stopKeep != nil {
		le.mu.Unlock()
		return
	}
	le.stopKeep, le.keepDone = make(chan struct{}), make(chan struct{})
	stop, done := le.stopKeep, le.keepDone
	le.mu.Unlock()
	go func() {
		defer close(done)
		t := time.NewTicker(le.ttl / 3)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			ctx, cancel := context.WithTimeout(context.Background(), le.ttl/3)
			err := le.Renew(ctx)
			cancel()
			if errors.Is(err, ErrLeaseLost) {
				return
			}
			if err != nil && !le.Valid() {
				le.mu.Lock()
				le.markLost()
				le.mu.Unlock()
				return
			}
		}
	}()
}

func (le *Lease) stopKeepAlive() {
	le.mu.Lock()
	stop, done := le.stopKeep, le.keepDone
	le.stopKeep = nil
	le.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}

// Release stops KeepAlive and deletes the lease key if it is still this holder's revision (a
// lease already lost is left alone: it belongs to someone else or to nobody).
func (le *Lease) Release(ctx context.Context) error {
	le.stopKeepAlive()
	le.renewMu.Lock() // no renewal in flight: the revision below is the last one
	defer le.renewMu.Unlock()
	le.mu.Lock()
	lost, rev := le.lost, le.rev
	le.markLost()
	le.mu.Unlock()
	if lost {
		return nil
	}
	err := le.ls.kv.Delete(ctx, le.key, jetstream.LastRevision(rev))
	if isRevisionMismatch(err) {
		return nil // expired meanwhile
	}
	if err != nil {
		return fmt.Errorf("nats: lease %s: release: %w (it expires by itself within %v)", le.name, err, le.ttl)
	}
	return nil
}

// Abandon stops renewing without releasing, as a crashed holder would (for tests and for a process
// that must stop at once): the lease expires after its TTL.
func (le *Lease) Abandon() {
	le.stopKeepAlive()
	le.mu.Lock()
	le.markLost()
	le.mu.Unlock()
}
