package nats

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/registry"
)

// hangBound only turns a hang into a failure: an operation on an unreachable store must end
// "at once" (after at most reconnectGrace), and without this change waited fleetOpTimeout (15 s)
// or, for a generation lock, generationWait (10 minutes).
const hangBound = 5 * time.Second

// unreachableErr checks that err says the store is unreachable, names it (without its secret)
// and says what to do.
func unreachableErr(t *testing.T, f *FleetStore, what string, err error, took time.Duration) {
	t.Helper()
	t.Logf("%s with the server down: %v after %v", what, err, took.Round(time.Millisecond))
	require.Error(t, err, what)
	assert.Less(t, took, hangBound, what)
	assert.True(t, errors.Is(err, ErrUnreachable), "%s: %v", what, err)
	assert.Contains(t, err.Error(), f.Location(), what)
	assert.Contains(t, err.Error(), "start nats-server there", what)
	assert.NotContains(t, err.Error(), "s3cret", what)
}

// TestFleetServerDown: with the NATS server stopped, what needs the server (a cold Load, a role
// write, the listings Stale reads, a generation lock, already waiting or not) fails at once with
// an error that names the store and says what to do, while warm methods keep running from
// memory; when the server is back, so are the operations.
func TestFleetServerDown(t *testing.T) {
	n, err := startNode(nodeConfig{name: "down", dir: t.TempDir(), token: "s3cret"})
	require.NoError(t, err)
	t.Cleanup(n.Stop)
	u := "nats://s3cret@" + strings.TrimPrefix(n.URL(), "nats://")
	f := openFleet(t, u, "down")
	holder := openFleet(t, u, "down") // another process, holding a generation lease
	require.NotContains(t, f.Location(), "s3cret")

	contract := registry.Contract{Role: "r", Purpose: "down test", Methods: map[string]string{"m": "func M(s string) (string, error)"}}
	_, err = f.PutRole(contract, time.Now())
	require.NoError(t, err)
	for _, m := range []string{"warm", "cold"} {
		_, err := holder.Update("r", m, func(a *registry.Artifact, _ bool) error {
			a.Promote("package artifact // "+m, "initial_forge", m, "pv", time.Now())
			return nil
		})
		require.NoError(t, err)
	}
	_, err = f.Load("r", "warm")
	require.NoError(t, err)
	_, err = f.Role("r")
	require.NoError(t, err)

	// A cold caller of r.cold already waits for the lease another process holds (in flight when
	// the server goes away).
	held, release := make(chan struct{}), make(chan struct{})
	go holder.WithGenerationLock("r", "cold", func() error { close(held); <-release; return nil })
	defer close(release)
	<-held
	waiting := make(chan error, 1)
	var waitStart time.Time
	go func() {
		waitStart = time.Now()
		waiting <- f.WithGenerationLock("r", "cold", func() error { return errors.New("ran without the lease") })
	}()
	time.Sleep(200 * time.Millisecond) // let it reach the wait

	n.Stop()
	stopped := time.Now()

	select {
	case err := <-waiting:
		unreachableErr(t, f, "a generation lock already waiting", err, time.Since(stopped))
	case <-time.After(hangBound):
		t.Fatalf("a generation lock waiting since %v still waits %v after the server stopped", waitStart, hangBound)
	}

	// Warm: from memory, whether or not the watch has set the cache aside yet.
	start := time.Now()
	a, err := f.Load("r", "warm")
	require.NoError(t, err, "a warm method runs from memory")
	assert.Equal(t, 1, a.Generation)
	assert.Less(t, time.Since(start), hangBound)
	_, ok := f.Lookup("r", "warm")
	assert.True(t, ok)
	_, err = f.Role("r")
	require.NoError(t, err, "a cached role is served from memory")

	ops := []struct {
		what string
		run  func() error
	}{
		{"a cold Load", func() error { _, err := f.Load("r", "cold"); return err }},
		{"PutRole", func() error { _, err := f.PutRole(contract, time.Now()); return err }},
		{"Role of an uncached role", func() error { _, err := f.Role("other"); return err }},
		{"Summaries", func() error { _, err := f.Summaries(); return err }},
		{"Roles", func() error { _, err := f.Roles(); return err }},
		{"List", func() error { _, err := f.List(); return err }},
		{"Each", func() error {
			return f.Each(func(registry.Key, *registry.Artifact, error) error { return nil })
		}},
		{"Update", func() error {
			_, err := f.Update("r", "cold", func(*registry.Artifact, bool) error { return nil })
			return err
		}},
		{"a generation lock", func() error {
			return f.WithGenerationLock("r", "new", func() error { return errors.New("ran without the lease") })
		}},
		{"a knowledge read", func() error { _, _, err := f.Knowledge().Read("go"); return err }},
		{"Doctor", func() error { _, err := f.Doctor(); return err }},
	}
	for _, op := range ops {
		start := time.Now()
		err := op.run()
		unreachableErr(t, f, op.what, err, time.Since(start))
	}

	// Back: the connection returns by itself and so do the operations.
	require.NoError(t, n.Restart())
	require.Eventually(t, func() bool {
		_, err := f.PutRole(contract, time.Now())
		return err == nil
	}, 20*time.Second, 50*time.Millisecond, "writes work again once the server is back")
	a, err = f.Load("r", "cold")
	require.NoError(t, err)
	assert.Equal(t, 1, a.Generation)
}
