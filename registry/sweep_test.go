package registry

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// While the revalidation sweep runs, Lookup and Role answer from memory however long ago a
// snapshot was checked (the sweep owns the check), and the sweep drops what another process
// changed or removed. Sweeps are run by hand here; the timer is an hour away.
func TestRevalidateSweepLookupDoesNoIO(t *testing.T) {
	root := t.TempDir()
	server, err := Open(root)
	require.NoError(t, err)
	defer server.Close()
	server.SetRevalidate(time.Hour)
	_, err = server.PutRole(Contract{Role: "r", Purpose: "first"}, t0)
	require.NoError(t, err)
	newArtifact(t, server, "r", "m", "package artifact // one")

	a, ok := server.Lookup("r", "m")
	require.True(t, ok)
	require.True(t, server.sweep.on.Load(), "the first Lookup starts the sweep")

	operator, err := Open(root) // another process
	require.NoError(t, err)
	_, err = operator.Update("r", "m", func(a *Artifact, _ bool) error { a.Lifecycle = Quarantined; return nil })
	require.NoError(t, err)
	_, err = operator.PutRole(Contract{Role: "r", Purpose: "second"}, t0)
	require.NoError(t, err)

	// Make every snapshot overdue: an inline check would stat now and see the change.
	server.mu.RLock()
	server.artifacts[Key{"r", "m"}].checked.Store(0)
	server.roles["r"].checked.Store(0)
	server.mu.RUnlock()
	a2, ok := server.Lookup("r", "m")
	require.True(t, ok, "while the sweep runs, Lookup does not look at the file")
	assert.Same(t, a, a2)
	r, err := server.Role("r")
	require.NoError(t, err)
	assert.Equal(t, "first", r.Purpose, "nor does Role")

	server.sweep.mu.Lock()
	gen := server.sweep.gen
	server.sweep.mu.Unlock()
	server.runSweep(gen)
	_, ok = server.Lookup("r", "m")
	assert.False(t, ok, "the sweep dropped the changed snapshot")
	a, err = server.Load("r", "m")
	require.NoError(t, err)
	assert.Equal(t, Quarantined, a.Lifecycle)
	r, err = server.Role("r")
	require.NoError(t, err)
	assert.Equal(t, "second", r.Purpose)

	require.NoError(t, os.Remove(server.ArtifactPath("r", "m")))
	a2, ok = server.Lookup("r", "m")
	require.True(t, ok)
	assert.Same(t, a, a2)
	server.runSweep(gen)
	_, ok = server.Lookup("r", "m")
	assert.False(t, ok, "a removed file's snapshot is dropped by the sweep")

	// An interval with no Lookup stops the sweep; the next Lookup checks inline and restarts it.
	newArtifact(t, server, "r", "n", "package artifact // two")
	_, ok = server.Lookup("r", "n")
	require.True(t, ok)
	server.runSweep(gen) // a Lookup since the last sweep: it goes on
	require.True(t, server.sweep.on.Load())
	server.runSweep(gen) // no Lookup since the last sweep
	require.False(t, server.sweep.on.Load(), "an idle interval stops the sweep")
	_, ok = server.Lookup("r", "n")
	require.True(t, ok)
	assert.True(t, server.sweep.on.Load())

	server.SetRevalidate(time.Nanosecond)
	assert.False(t, server.sweep.on.Load(), "an interval under minSweepInterval is checked inline")
	_, ok = server.Lookup("r", "n")
	require.True(t, ok)
	assert.False(t, server.sweep.on.Load())

	require.NoError(t, server.Close())
	server.SetRevalidate(time.Hour)
	_, ok = server.Lookup("r", "n")
	require.True(t, ok)
	assert.False(t, server.sweep.on.Load(), "a closed store starts no sweep")
}

// With the sweep's own timer, another process's write is seen within about one interval.
func TestRevalidateSweepSeesOtherProcessWrites(t *testing.T) {
	root := t.TempDir()
	server, err := Open(root)
	require.NoError(t, err)
	defer server.Close()
	server.SetRevalidate(minSweepInterval)
	_, err = server.PutRole(Contract{Role: "r", Purpose: "first"}, t0)
	require.NoError(t, err)
	newArtifact(t, server, "r", "m", "package artifact // one")
	_, ok := server.Lookup("r", "m")
	require.True(t, ok)
	require.True(t, server.sweep.on.Load())

	operator, err := Open(root)
	require.NoError(t, err)
	_, err = operator.Update("r", "m", func(a *Artifact, _ bool) error { a.Lifecycle = Blessed; return nil })
	require.NoError(t, err)
	// The bound only detects a hang: the sweep runs every 50 ms.
	require.Eventually(t, func() bool {
		_, ok := server.Lookup("r", "m")
		return !ok
	}, 10*time.Second, 5*time.Millisecond)
	a, err := server.Load("r", "m")
	require.NoError(t, err)
	assert.Equal(t, Blessed, a.Lifecycle)
	assert.Positive(t, server.sweep.sweeps.Load())
}

// A flush that proves many candidates durable writes each artifact and then each role's index
// once; listings show the promotions.
func TestFlushPromotionsReachTheIndex(t *testing.T) {
	s, err := Open(t.TempDir())
	require.NoError(t, err)
	for _, m := range []string{"a", "b", "c"} {
		newArtifact(t, s, "r", m, "package artifact // "+m)
	}
	newArtifact(t, s, "q", "a", "package artifact // qa")
	rec := NewRecorder(s, time.Hour)
	defer rec.Close()
	for range DurableAfter {
		for _, k := range []Key{{"r", "a"}, {"r", "b"}, {"r", "c"}, {"q", "a"}} {
			rec.Record(k.Role, k.Method, Success, time.Millisecond, "")
		}
	}
	rec.Flush()
	sums, err := s.Summaries()
	require.NoError(t, err)
	require.Len(t, sums, 4)
	for _, sm := range sums {
		assert.Equal(t, Durable, sm.Lifecycle, "%s.%s", sm.Role, sm.Method)
	}
	other, err := Open(s.Root()) // another process reads the files
	require.NoError(t, err)
	a, err := other.Load("r", "b")
	require.NoError(t, err)
	assert.Equal(t, Durable, a.Lifecycle)
}

// A pin (LookupPin) answers exactly what Lookup would while its snapshot is the cached one, and
// false once the snapshot has left the cache by any way: replaced by a write, dropped by the
// sweep, evicted by the cache bound, invalidated by a watch.
func TestPinAnswersLikeLookupUntilItsSnapshotLeaves(t *testing.T) {
	root := t.TempDir()
	s, err := Open(root)
	require.NoError(t, err)
	defer s.Close()
	s.SetRevalidate(time.Hour)
	var _ PinLookup = s
	_, err = s.PutRole(Contract{Role: "r", Purpose: "p"}, t0)
	require.NoError(t, err)
	newArtifact(t, s, "r", "m", "package artifact // one")

	pinOf := func() (*Artifact, Pin) {
		t.Helper()
		a, pin, ok := s.LookupPin("r", "m")
		require.True(t, ok)
		b, ok := s.Relookup(pin)
		require.True(t, ok, "a fresh pin answers")
		require.Same(t, a, b)
		return a, pin
	}
	_, none := s.Relookup(Pin{})
	assert.False(t, none, "the zero pin pins nothing")

	a, pin := pinOf()
	_, err = s.Update("r", "m", func(a *Artifact, _ bool) error { a.Lifecycle = Blessed; return nil })
	require.NoError(t, err)
	_, ok := s.Relookup(pin)
	assert.False(t, ok, "a write replaced the snapshot")
	b, ok := s.Lookup("r", "m")
	require.True(t, ok)
	assert.NotSame(t, a, b)

	_, pin = pinOf()
	operator, err := Open(root) // another process
	require.NoError(t, err)
	_, err = operator.Update("r", "m", func(a *Artifact, _ bool) error { a.Lifecycle = Quarantined; return nil })
	require.NoError(t, err)
	s.sweep.mu.Lock()
	gen := s.sweep.gen
	s.sweep.mu.Unlock()
	s.runSweep(gen)
	_, ok = s.Relookup(pin)
	assert.False(t, ok, "the sweep dropped the changed snapshot")
	_, err = s.Load("r", "m")
	require.NoError(t, err)

	// An inline check (no sweep) that finds the file changed drops the snapshot as Lookup does.
	_, pin = pinOf()
	s.SetRevalidate(time.Nanosecond)
	_, err = operator.Update("r", "m", func(a *Artifact, _ bool) error { a.Lifecycle = Blessed; return nil })
	require.NoError(t, err)
	_, ok = s.Relookup(pin)
	assert.False(t, ok, "the inline check saw the other process's write")
	_, ok = s.Lookup("r", "m")
	assert.False(t, ok)
	s.SetRevalidate(time.Hour)
	_, err = s.Load("r", "m")
	require.NoError(t, err)

	_, pin = pinOf()
	newArtifact(t, s, "r", "n", "package artifact // two")
	_, pinN, ok := s.LookupPin("r", "n")
	require.True(t, ok)
	s.mu.Lock()
	for _, sn := range s.artifacts {
		sn.used.Store(false)
	}
	s.mu.Unlock()
	s.SetCacheLimit(1) // one of the two is evicted
	_, stillM := s.Lookup("r", "m")
	_, stillN := s.Lookup("r", "n")
	require.NotEqual(t, stillM, stillN, "the bound keeps one snapshot")
	_, ok = s.Relookup(pin)
	assert.Equal(t, stillM, ok, "eviction by the cache bound: the pin follows Lookup")
	_, ok = s.Relookup(pinN)
	assert.Equal(t, stillN, ok, "eviction by the cache bound: the pin follows Lookup")
	s.SetCacheLimit(0)

	_, err = s.Load("r", "m")
	require.NoError(t, err)
	_, pin = pinOf()
	s.invalidateAll()
	_, ok = s.Relookup(pin)
	assert.False(t, ok, "an invalidation of everything drops the snapshot")
}
