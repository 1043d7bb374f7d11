package nats

import (
	"context"
	"errors"
	"github.com/artifactforge/forge/registry/nats/embedded"
	"testing"
	"time"
)

func TestLeaseSingleNode(t *testing.T) {
	dir := t.TempDir()
	n, err := embedded.StartNode(embedded.NodeConfig{Name: "lease", Dir: dir, SyncAlways: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Stop)
	a, b := open(t, "lease", 1, n.URL()), open(t, "lease", 1, n.URL())
	ctx := testCtx(t)

	le, err := a.Leases.TryAcquire(ctx, "text_tools.upper", 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if le.TTL() != time.Second {
		t.Fatalf("TTL %v: a TTL under a second is rounded up to the server's 1 s", le.TTL())
	}
	_, err = b.Leases.TryAcquire(ctx, "text_tools.upper", time.Second)
	if !errors.Is(err, ErrLeaseHeld) {
		t.Fatalf("second holder: %v, want ErrLeaseHeld", err)
	}
	// A waiting Acquire gets the lease as soon as it is released (watch, not TTL).
	got := make(chan *Lease, 1)
	go func() {
		l, err := b.Leases.Acquire(ctx, "text_tools.upper", time.Second)
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	time.Sleep(100 * time.Millisecond)
	released := time.Now()
	if err := le.Release(ctx); err != nil {
		t.Fatal(err)
	}
	l2 := <-got
	if l2 == nil {
		t.FailNow()
	}
	t.Logf("release -> waiting Acquire holds it: %v", time.Since(released))
	if err := l2.Release(ctx); err != nil {
		t.Fatal(err)
	}

	// Acquire gives up with its context.
	held, err := a.Leases.TryAcquire(ctx, "text_tools.lower", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if _, err := b.Leases.Acquire(short, "text_tools.lower", time.Second); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire past its context: %v", err)
	}
	held.Release(ctx)

	// A holder that cannot reach the server learns it lost the lease within the TTL.
	kept, err := a.Leases.TryAcquire(ctx, "text_tools.title", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	kept.KeepAlive()
	n.Stop()
	stopped := time.Now()
	select {
	case <-kept.Lost():
		t.Logf("server gone -> holder knows its lease is lost after %v (TTL 1 s)", time.Since(stopped))
	case <-time.After(3 * time.Second):
		t.Fatal("Lost not closed although no renewal could reach the server for 3 x TTL")
	}
	if kept.Valid() {
		t.Fatal("lease still Valid after it was lost")
	}
	kept.Release(ctx) // stops KeepAlive; nothing to delete
}
