package registry

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hangBound only detects a hang: the watcher normally acts within milliseconds.
const hangBound = 10 * time.Second

// changes collects the batches a watcher reports.
type changes struct {
	mu  sync.Mutex
	got []Change
	ch  chan struct{}
}

func newChanges() *changes { return &changes{ch: make(chan struct{}, 1024)} }

func (c *changes) add(b []Change) {
	c.mu.Lock()
	c.got = append(c.got, b...)
	c.mu.Unlock()
	c.ch <- struct{}{}
}

// waitFor waits until the watcher reported a change matching want (or ChangeAll).
func (c *changes) waitFor(t *testing.T, want Change) {
	t.Helper()
	deadline := time.After(hangBound)
	for {
		c.mu.Lock()
		for _, g := range c.got {
			if g == want || g.Kind == ChangeAll {
				c.got = nil
				c.mu.Unlock()
				return
			}
		}
		c.mu.Unlock()
		select {
		case <-c.ch:
		case <-deadline:
			t.Fatalf("the watcher did not report %+v within %v (a hang)", want, hangBound)
		}
	}
}

func lookupLifecycle(t *testing.T, s *Store, role, method string) Lifecycle {
	t.Helper()
	a, ok := s.Lookup(role, method)
	if !ok {
		var err error
		a, err = s.Load(role, method)
		require.NoError(t, err)
	}
	return a.Lifecycle
}

// With the poll switched off (an hour), only the watcher can make another store's writes visible.
func TestWatchSeesOtherProcessWritesWithoutThePoll(t *testing.T) {
	root := t.TempDir()
	server, err := Open(root)
	require.NoError(t, err)
	server.SetRevalidate(time.Hour)
	_, err = server.PutRole(Contract{Role: "r", Purpose: "first"}, t0)
	require.NoError(t, err)
	newArtifact(t, server, "r", "m", "package artifact // one")
	seen := newChanges()
	w, err := server.Watch(seen.add)
	require.NoError(t, err)
	defer w.Close()
	assert.Equal(t, Candidate, lookupLifecycle(t, server, "r", "m"))

	operator, err := Open(root)
	require.NoError(t, err)
	for i, lc := range []Lifecycle{Blessed, Quarantined, Durable} {
		_, err = operator.Update("r", "m", func(a *Artifact, _ bool) error { a.Lifecycle = lc; return nil })
		require.NoError(t, err)
		seen.waitFor(t, Change{Kind: ChangeArtifact, Role: "r", Method: "m"})
		assert.Equal(t, lc, lookupLifecycle(t, server, "r", "m"), "change %d", i)
	}

	_, err = operator.PutRole(Contract{Role: "r", Purpose: "second"}, t0)
	require.NoError(t, err)
	seen.waitFor(t, Change{Kind: ChangeRole, Role: "r"})
	r, err := server.Role("r")
	require.NoError(t, err)
	assert.Equal(t, "second", r.Purpose)

	// A new role's directory appears after the watch started; its artifacts are watched too.
	_, err = operator.PutRole(Contract{Role: "q", Purpose: "new"}, t0)
	require.NoError(t, err)
	newArtifact(t, operator, "q", "x", "package artifact // q")
	seen.waitFor(t, Change{Kind: ChangeArtifact, Role: "q", Method: "x"})
	assert.Equal(t, Candidate, lookupLifecycle(t, server, "q", "x"))
	_, err = operator.Update("q", "x", func(a *Artifact, _ bool) error { a.Lifecycle = Blessed; return nil })
	require.NoError(t, err)
	seen.waitFor(t, Change{Kind: ChangeArtifact, Role: "q", Method: "x"})
	assert.Equal(t, Blessed, lookupLifecycle(t, server, "q", "x"))

	// This process's own writes keep their snapshot (no reload after each metrics flush).
	a1, err := server.Update("r", "m", func(a *Artifact, _ bool) error { a.SuccessCount++; return nil })
	require.NoError(t, err)
	a2, ok := server.Lookup("r", "m")
	require.True(t, ok)
	assert.Same(t, a1, a2)
}

// The watched directory removed and recreated (a store restored from a backup): the watcher
// re-adds it and what was cached is dropped.
func TestWatchSurvivesRecreatedDirectories(t *testing.T) {
	root := t.TempDir()
	server, err := Open(root)
	require.NoError(t, err)
	server.SetRevalidate(time.Hour)
	newArtifact(t, server, "r", "m", "package artifact // one")
	seen := newChanges()
	w, err := server.Watch(seen.add)
	require.NoError(t, err)
	defer w.Close()
	assert.Equal(t, Candidate, lookupLifecycle(t, server, "r", "m"))

	// tools/ as a whole is moved away and a new one put in its place by rename.
	other := t.TempDir()
	operator, err := Open(other)
	require.NoError(t, err)
	newArtifact(t, operator, "r", "m", "package artifact // restored")
	_, err = operator.Update("r", "m", func(a *Artifact, _ bool) error { a.Lifecycle = Blessed; return nil })
	require.NoError(t, err)
	require.NoError(t, os.Rename(filepath.Join(root, "tools"), filepath.Join(root, "tools.old")))
	require.NoError(t, os.Rename(filepath.Join(other, "tools"), filepath.Join(root, "tools")))
	seen.waitFor(t, Change{Kind: ChangeAll})
	assert.Equal(t, Blessed, lookupLifecycle(t, server, "r", "m"))

	// The recreated directory is watched: a later change is seen too.
	operator2, err := Open(root)
	require.NoError(t, err)
	_, err = operator2.Update("r", "m", func(a *Artifact, _ bool) error { a.Lifecycle = Quarantined; return nil })
	require.NoError(t, err)
	seen.waitFor(t, Change{Kind: ChangeArtifact, Role: "r", Method: "m"})
	assert.Equal(t, Quarantined, lookupLifecycle(t, server, "r", "m"))
}
