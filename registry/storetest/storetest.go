// Package storetest is the conformance table every registry.Backend must pass: what the forge, the
// CLI, the server and watch mode rely on from a store, run against the directory store (registry)
// and the fleet store (registry/nats) alike. The assertions are the directory store's own tests'
// (registry_test.go), written against the interface.
package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/registry"
)

// Open returns a new handle on the store of test t: called twice with the same t, it returns two
// handles on one store (as two processes would hold), each closed by the caller's cleanup.
type Open func(t *testing.T) registry.Backend

var t0 = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

// waitFor bounds the waits for another handle's writes: only to turn a hang into a failure.
const waitFor = 10 * time.Second

// Run runs the conformance table against the backend open opens.
func Run(t *testing.T, open Open) {
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, Open)
	}{
		{"Roles", testRoles},
		{"ArtifactRoundTrip", testArtifactRoundTrip},
		{"HistoryKeepsThreeGenerations", testHistory},
		{"UpdateErrorWritesNothing", testUpdateErrorWritesNothing},
		{"InvalidNamesWriteNothing", testInvalidNames},
		{"ConcurrentUpdatesLoseNothing", testConcurrentUpdates},
		{"RecorderMergesAndPromotes", testRecorder},
		{"WritesKeepFlushedMetrics", testWritesKeepMetrics},
		{"OutcomesStayWithTheirGeneration", testOutcomesStayWithTheirGeneration},
		{"AnotherHandlesGenerationKeepsItsWindow", testAnotherHandlesGeneration},
		{"GenerationLockIsExclusive", testGenerationLock},
		{"WatchSeesAnotherHandlesWrite", testWatch},
		{"Knowledge", testKnowledge},
		{"ImportRoundTrip", testImport},
		{"SampleIsSharedAndKeptByMetrics", testSample},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open) })
	}
}

func contract(role, purpose string) registry.Contract {
	return registry.Contract{Role: role, Purpose: purpose}
}

func create(t *testing.T, b registry.Backend, role, method, code string) *registry.Artifact {
	t.Helper()
	a, err := b.Update(role, method, func(a *registry.Artifact, exists bool) error {
		a.Promote(code, "initial_forge", "test-model", "pv1", t0)
		return nil
	})
	require.NoError(t, err)
	return a
}

func testRoles(t *testing.T, open Open) {
	s, other := open(t), open(t)
	rec, prev, err := s.PutRoleReport(contract("text", "string tools"), t0)
	require.NoError(t, err)
	assert.Nil(t, prev, "a new role replaces nothing")
	assert.Equal(t, rec.Contract.Fingerprint(), rec.Fingerprint)
	assert.Equal(t, t0, rec.CreatedAt)
	_, err = s.PutRole(contract("aaa", "first by name"), t0)
	require.NoError(t, err)

	r, err := other.Role("text")
	require.NoError(t, err)
	assert.Equal(t, "string tools", r.Purpose)
	assert.Equal(t, r.Contract.Fingerprint(), r.Fingerprint)

	later := t0.Add(time.Hour)
	rec2, prev, err := other.PutRoleReport(contract("text", "better string tools"), later)
	require.NoError(t, err)
	require.NotNil(t, prev, "the replaced record is returned")
	assert.Equal(t, "string tools", prev.Purpose)
	assert.Equal(t, rec.Fingerprint, prev.Fingerprint)
	assert.NotEqual(t, rec.Fingerprint, rec2.Fingerprint)
	assert.Equal(t, t0, rec2.CreatedAt, "creation time kept")
	assert.Equal(t, later, rec2.UpdatedAt)

	all, err := open(t).Roles()
	require.NoError(t, err)
	var names []string
	for _, r := range all {
		names = append(names, r.Role)
	}
	assert.Equal(t, []string{"aaa", "text"}, names, "by name")
	assert.Equal(t, "better string tools", all[1].Purpose)

	_, err = s.Role("nope")
	assert.ErrorIs(t, err, registry.ErrNotFound)
	assert.Contains(t, err.Error(), "forge role add")
	_, err = s.PutRole(registry.Contract{Role: "r", Purpose: "  "}, t0)
	assert.ErrorIs(t, err, registry.ErrInvalidContract)
}

func testArtifactRoundTrip(t *testing.T, open Open) {
	s := open(t)
	_, err := s.PutRole(contract("text", "string tools"), t0)
	require.NoError(t, err)
	a := create(t, s, "text", "upper", "package artifact\nfunc Upper(s string) string { return s }")
	assert.Equal(t, 1, a.Generation)
	assert.Equal(t, registry.Candidate, a.Lifecycle)
	got, ok := s.Lookup("text", "upper")
	require.True(t, ok, "the writer's own write is cached")
	assert.Same(t, a, got)
	create(t, s, "abc", "zed", "package artifact // z")
	create(t, s, "text", "lower", "package artifact // l")

	s2 := open(t) // another process's view
	_, ok = s2.Lookup("text", "upper")
	assert.False(t, ok, "Lookup is memory only")
	loaded, err := s2.Load("text", "upper")
	require.NoError(t, err)
	assert.Equal(t, a.Code, loaded.Code)
	assert.Equal(t, a.CodeChecksum, loaded.CodeChecksum)
	assert.Equal(t, 1, loaded.Generation)
	cached, ok := s2.Lookup("text", "upper")
	require.True(t, ok, "Load caches")
	assert.Same(t, loaded, cached)

	peek, err := open(t).Peek("text", "upper")
	require.NoError(t, err)
	assert.Equal(t, a.Code, peek.Code)

	_, err = s2.Load("text", "nope")
	assert.ErrorIs(t, err, registry.ErrNotFound)
	_, err = s2.Peek("text", "nope")
	assert.ErrorIs(t, err, registry.ErrNotFound)

	keys, err := s2.List()
	require.NoError(t, err)
	want := []registry.Key{{Role: "abc", Method: "zed"}, {Role: "text", Method: "lower"}, {Role: "text", Method: "upper"}}
	assert.Equal(t, want, keys, "key order")

	var each []registry.Key
	require.NoError(t, s2.Each(func(k registry.Key, a *registry.Artifact, err error) error {
		require.NoError(t, err)
		assert.Equal(t, k, registry.Key{Role: a.Role, Method: a.Method})
		each = append(each, k)
		return nil
	}))
	assert.Equal(t, want, each)
	stop := errors.New("stop")
	n := 0
	assert.ErrorIs(t, s2.Each(func(registry.Key, *registry.Artifact, error) error { n++; return stop }), stop)
	assert.Equal(t, 1, n, "fn's error stops the walk")

	sums, err := s2.Summaries()
	require.NoError(t, err)
	require.Len(t, sums, 3)
	for i, sm := range sums {
		assert.Equal(t, want[i], sm.Key())
		assert.NoError(t, sm.Err)
		assert.Equal(t, 1, sm.Generation)
		assert.Equal(t, registry.Candidate, sm.Lifecycle)
	}
	assert.Equal(t, a.CodeChecksum, sums[2].CodeChecksum)
	assert.Equal(t, "initial_forge", sums[2].Trigger)

	// What the listings show of the history and signature: the newest generation's trigger and
	// the params schema, as another process sees them.
	schema := json.RawMessage(`{"type":"object","properties":{"s":{"type":"string"}},"required":["s"]}`)
	_, err = s.Update("text", "upper", func(a *registry.Artifact, exists bool) error {
		a.Signature = registry.Signature{Func: "Upper", Decl: "func Upper(s string) string", ParamsSchema: schema}
		a.Promote("package artifact\nfunc Upper(s string) string { return s + \"\" }", "repair:intrinsic", "test-model", "pv1", t0)
		return nil
	})
	require.NoError(t, err)
	sums, err = open(t).Summaries()
	require.NoError(t, err)
	require.Len(t, sums, 3)
	assert.Equal(t, "repair:intrinsic", sums[2].Trigger)
	assert.JSONEq(t, string(schema), string(sums[2].ParamsSchema))
	assert.Equal(t, "func Upper(s string) string", sums[2].Decl)
	assert.Empty(t, sums[0].ParamsSchema, "no signature, no schema")
	assert.NotEmpty(t, s.Location())
	assert.NotEmpty(t, s.LocalDir())
}

func testHistory(t *testing.T, open Open) {
	s := open(t)
	for i := 1; i <= 5; i++ {
		_, err := s.Update("r", "m", func(a *registry.Artifact, exists bool) error {
			assert.Equal(t, i > 1, exists)
			a.Promote(fmt.Sprintf("package artifact\n// v%d", i), "initial_forge", "m", "pv", t0.Add(time.Duration(i)*time.Minute))
			return nil
		})
		require.NoError(t, err)
	}
	a, err := open(t).Load("r", "m")
	require.NoError(t, err)
	assert.Equal(t, 5, a.Generation)
	require.Len(t, a.History, registry.MaxHistory)
	assert.Equal(t, []string{"gen-5", "gen-4", "gen-3"}, []string{a.History[0].ID, a.History[1].ID, a.History[2].ID})
	assert.Equal(t, "gen-4", a.History[0].ParentID)
	assert.Equal(t, "package artifact\n// v3", a.History[2].Code)
	assert.Equal(t, t0.Add(time.Minute), a.CreatedAt.UTC(), "created_at is the first generation's")

	_, err = open(t).Update("r", "m", func(a *registry.Artifact, _ bool) error { return a.Rollback(3, t0) })
	require.NoError(t, err)
	a, err = open(t).Load("r", "m")
	require.NoError(t, err)
	assert.Equal(t, 6, a.Generation)
	assert.Equal(t, "package artifact\n// v3", a.Code)
	assert.Equal(t, "operator:rollback:gen-3", a.History[0].Trigger)
	assert.Equal(t, registry.Durable, a.Lifecycle)
}

func testUpdateErrorWritesNothing(t *testing.T, open Open) {
	s := open(t)
	create(t, s, "r", "m", "package artifact\n// one")
	before, err := open(t).Peek("r", "m")
	require.NoError(t, err)
	_, err = s.Update("r", "m", func(a *registry.Artifact, _ bool) error {
		a.Code = "tampered without Promote"
		return nil
	})
	require.ErrorContains(t, err, "checksum mismatch")
	_, err = s.Update("r", "m", func(a *registry.Artifact, _ bool) error {
		a.Lifecycle = registry.Blessed
		return os.ErrPermission
	})
	require.ErrorIs(t, err, os.ErrPermission)
	_, err = s.Update("r", "m", func(a *registry.Artifact, _ bool) error {
		a.Method = "other"
		return nil
	})
	require.Error(t, err, "an update may not rename the artifact")
	after, err := open(t).Peek("r", "m")
	require.NoError(t, err)
	assert.Equal(t, before, after)
	got, err := s.Load("r", "m")
	require.NoError(t, err)
	assert.Equal(t, registry.Candidate, got.Lifecycle)
	_, err = s.Update("r", "new", func(a *registry.Artifact, exists bool) error { return os.ErrPermission })
	require.ErrorIs(t, err, os.ErrPermission)
	_, err = open(t).Load("r", "new")
	assert.ErrorIs(t, err, registry.ErrNotFound, "an aborted creation creates nothing")
}

func testInvalidNames(t *testing.T, open Open) {
	s := open(t)
	for _, bad := range []string{"../evil", "a/b", "", "A", "..", "a.b", "a>b", "a*"} {
		_, err := s.PutRole(registry.Contract{Role: bad, Purpose: "x"}, t0)
		assert.ErrorIs(t, err, registry.ErrInvalidName, bad)
		_, err = s.Update("ok", bad, func(*registry.Artifact, bool) error { return nil })
		assert.ErrorIs(t, err, registry.ErrInvalidName, bad)
		_, err = s.Update(bad, "ok", func(*registry.Artifact, bool) error { return nil })
		assert.ErrorIs(t, err, registry.ErrInvalidName, bad)
		_, err = s.Load(bad, "ok")
		assert.ErrorIs(t, err, registry.ErrInvalidName, bad)
		_, err = s.Peek("ok", bad)
		assert.ErrorIs(t, err, registry.ErrInvalidName, bad)
		_, err = s.Role(bad)
		assert.ErrorIs(t, err, registry.ErrInvalidName, bad)
		err = s.WithGenerationLock(bad, "ok", func() error { return nil })
		assert.ErrorIs(t, err, registry.ErrInvalidName, bad)
	}
	keys, err := s.List()
	require.NoError(t, err)
	assert.Empty(t, keys)
	roles, err := s.Roles()
	require.NoError(t, err)
	assert.Empty(t, roles)
}

// testConcurrentUpdates: read-modify-writes from two handles (processes) and several goroutines
// each never lose one another's change.
func testConcurrentUpdates(t *testing.T, open Open) {
	handles := []registry.Backend{open(t), open(t)}
	create(t, handles[0], "r", "m", "package artifact")
	const perWorker, workers = 8, 3
	var wg sync.WaitGroup
	errs := make(chan error, len(handles)*workers*perWorker)
	for _, h := range handles {
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range perWorker {
					_, err := h.Update("r", "m", func(a *registry.Artifact, exists bool) error {
						if !exists {
							return errors.New("the artifact vanished")
						}
						a.RepairCountSinceRegen++
						return nil
					})
					if err != nil {
						errs <- err
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	a, err := open(t).Load("r", "m")
	require.NoError(t, err)
	assert.Equal(t, len(handles)*workers*perWorker, a.RepairCountSinceRegen, "no update lost")
}

func testRecorder(t *testing.T, open Open) {
	s := open(t)
	_, err := s.PutRole(contract("r", "p"), t0)
	require.NoError(t, err)
	create(t, s, "r", "m", "package artifact")
	_, err = s.Role("r") // cached: a flush must advance it
	require.NoError(t, err)
	rec := s.NewRecorder(time.Hour) // flush only when asked
	for i := 0; i < 5; i++ {
		rec.Record("r", "m", registry.Success, time.Millisecond, "")
	}
	rec.Record("r", "m", registry.ExtrinsicFailure, 2*time.Millisecond, "HTTP 503")
	rec.Record("r", "gone", registry.Success, time.Millisecond, "")

	a, err := s.Load("r", "m")
	require.NoError(t, err)
	assert.Zero(t, a.SuccessCount, "nothing is written before a flush")

	rep := rec.Flush()
	assert.Equal(t, int64(6), rep.Merged[registry.Key{Role: "r", Method: "m"}])
	assert.ErrorContains(t, rep.Dropped[registry.Key{Role: "r", Method: "gone"}], "the artifact is gone")

	check := func(who string, a *registry.Artifact) {
		assert.Equal(t, int64(5), a.SuccessCount, who)
		assert.Equal(t, int64(1), a.FailureCount, who)
		assert.Equal(t, int64(1), a.ExtrinsicFailureCount, who)
		assert.Equal(t, "extrinsic", a.LastFailureClass, who)
		assert.Equal(t, "HTTP 503", a.LastFailureReason, who)
		assert.Equal(t, "ssssse", a.Recent, who)
		assert.Zero(t, a.RecentFailureRate, who+": extrinsic failures are not health failures")
		assert.Equal(t, registry.Durable, a.Lifecycle, who+": promoted after DurableAfter successes")
		assert.Equal(t, int64(7*time.Millisecond), a.TotalDurationNanos, who)
		assert.Equal(t, int64(2*time.Millisecond), a.MaxDurationNanos, who)
		assert.NotNil(t, a.LastUsedAt, who)
	}
	a, ok := s.Lookup("r", "m")
	require.True(t, ok)
	check("the flushing handle's cache", a)
	a, err = s.Load("r", "m")
	require.NoError(t, err)
	check("the flushing handle", a)
	other := open(t)
	a, err = other.Load("r", "m")
	require.NoError(t, err)
	check("another handle", a)
	sums, err := other.Summaries()
	require.NoError(t, err)
	require.Len(t, sums, 1)
	assert.Equal(t, int64(5), sums[0].SuccessCount)
	assert.Equal(t, "ssssse", sums[0].Recent)
	assert.Equal(t, registry.Durable, sums[0].Lifecycle)

	r, err := s.Role("r")
	require.NoError(t, err)
	assert.Equal(t, int64(6), r.UsageCount, "the cached role")
	r, err = open(t).Role("r")
	require.NoError(t, err)
	assert.Equal(t, int64(6), r.UsageCount, "another handle's role")
	assert.NotNil(t, r.LastUsedAt)

	for i := 0; i < 30; i++ {
		rec.Record("r", "m", registry.IntrinsicFailure, 0, "panic")
	}
	rec.Close()
	a, err = open(t).Load("r", "m")
	require.NoError(t, err)
	assert.Len(t, a.Recent, registry.RecentWindow)
	assert.Equal(t, 1.0, a.RecentFailureRate)
	assert.Equal(t, int64(30), a.IntrinsicFailureCount)
	assert.Equal(t, "intrinsic", a.LastFailureClass)
	assert.Equal(t, "panic", a.LastFailureReason)
	assert.Equal(t, int64(5), a.SuccessCount)

	// Two recorders (two processes) flushing the same artifact add up.
	r1, r2 := open(t).NewRecorder(time.Hour), open(t).NewRecorder(time.Hour)
	for i := 0; i < 7; i++ {
		r1.Record("r", "m", registry.Success, time.Millisecond, "")
		r2.Record("r", "m", registry.CallerFailure, time.Millisecond, "bad args")
	}
	var wg sync.WaitGroup
	for _, rc := range []registry.MetricsRecorder{r1, r2} {
		wg.Add(1)
		go func() { defer wg.Done(); rc.Close() }()
	}
	wg.Wait()
	a, err = open(t).Load("r", "m")
	require.NoError(t, err)
	assert.Equal(t, int64(12), a.SuccessCount)
	assert.Equal(t, int64(7), a.CallerFailureCount)
	r, err = open(t).Role("r")
	require.NoError(t, err)
	assert.Equal(t, int64(6+30+14), r.UsageCount)
}

// testWritesKeepMetrics: an artifact write after a flush keeps the flushed counters (no lost
// update between the two kinds of writes), and what the write changes of them sticks.
func testWritesKeepMetrics(t *testing.T, open Open) {
	s, op := open(t), open(t)
	_, err := s.PutRole(contract("r", "p"), t0)
	require.NoError(t, err)
	create(t, s, "r", "m", "package artifact")
	rec := s.NewRecorder(time.Hour)
	defer rec.Close()
	for i := 0; i < 4; i++ {
		rec.Record("r", "m", registry.Success, time.Millisecond, "")
	}
	rec.Flush()
	_, err = op.Update("r", "m", func(a *registry.Artifact, _ bool) error {
		assert.Equal(t, int64(4), a.SuccessCount, "fn sees the flushed counters")
		a.Lifecycle = registry.Blessed
		return nil
	})
	require.NoError(t, err)
	rec.Record("r", "m", registry.AdaptiveFailure, time.Millisecond, "drift")
	rec.Flush()
	a, err := open(t).Load("r", "m")
	require.NoError(t, err)
	assert.Equal(t, registry.Blessed, a.Lifecycle)
	assert.Equal(t, int64(4), a.SuccessCount)
	assert.Equal(t, int64(1), a.AdaptiveFailureCount)
	assert.Equal(t, "ssssa", a.Recent)

	// A bless that resets the counters, then a new generation (which starts a new recent window).
	_, err = op.Update("r", "m", func(a *registry.Artifact, _ bool) error {
		a.Counters = registry.Counters{}
		a.LastFailureClass, a.LastFailureReason = "", ""
		return nil
	})
	require.NoError(t, err)
	rec.Record("r", "m", registry.Success, time.Millisecond, "")
	rec.Flush()
	a, err = open(t).Load("r", "m")
	require.NoError(t, err)
	assert.Equal(t, int64(1), a.SuccessCount, "counted from the reset")
	assert.Zero(t, a.AdaptiveFailureCount)
	assert.Empty(t, a.LastFailureClass)
	assert.Equal(t, "s", a.Recent)
	_, err = op.Update("r", "m", func(a *registry.Artifact, _ bool) error {
		a.Promote("package artifact // two", "regenerate:test", "m", "pv", t0)
		return nil
	})
	require.NoError(t, err)
	rec.Record("r", "m", registry.IntrinsicFailure, time.Millisecond, "boom")
	rec.Flush()
	a, err = open(t).Load("r", "m")
	require.NoError(t, err)
	assert.Equal(t, 2, a.Generation)
	assert.Equal(t, "i", a.Recent, "the recent window judges the current code only")
	assert.Equal(t, int64(1), a.SuccessCount)
	assert.Equal(t, int64(1), a.IntrinsicFailureCount)
}

// testGenerationLock: concurrent cold callers on two handles generate once; the lock is exclusive.
func testGenerationLock(t *testing.T, open Open) {
	handles := []registry.Backend{open(t), open(t)}
	var inside, maxInside, generated atomic.Int64
	var wg sync.WaitGroup
	const callers = 16
	errs := make(chan error, callers)
	for i := range callers {
		h := handles[i%len(handles)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := h.WithGenerationLock("r", "cold", func() error {
				n := inside.Add(1)
				defer inside.Add(-1)
				for {
					m := maxInside.Load()
					if n <= m || maxInside.CompareAndSwap(m, n) {
						break
					}
				}
				if _, err := h.Load("r", "cold"); err == nil {
					return nil // generated meanwhile by another caller
				} else if !errors.Is(err, registry.ErrNotFound) {
					return err
				}
				time.Sleep(20 * time.Millisecond) // the provider call
				generated.Add(1)
				_, err := h.Update("r", "cold", func(a *registry.Artifact, exists bool) error {
					a.Promote("package artifact // cold", "initial_forge", "m", "pv", t0)
					return nil
				})
				return err
			})
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	assert.Equal(t, int64(1), maxInside.Load(), "the lock is exclusive")
	assert.Equal(t, int64(1), generated.Load(), "one generation")
	a, err := open(t).Load("r", "cold")
	require.NoError(t, err)
	assert.Equal(t, 1, a.Generation)
	want := errors.New("fn's error")
	assert.ErrorIs(t, handles[0].WithGenerationLock("r", "cold", func() error { return want }), want)
	assert.NoError(t, handles[1].WithGenerationLock("r", "cold", func() error { return nil }), "released after an error")
}

func testWatch(t *testing.T, open Open) {
	s, writer := open(t), open(t)
	_, err := s.PutRole(contract("r", "first"), t0)
	require.NoError(t, err)
	create(t, s, "r", "m", "package artifact")
	_, err = s.Load("r", "m")
	require.NoError(t, err)
	_, err = s.Role("r")
	require.NoError(t, err)

	var mu sync.Mutex
	var seen []registry.Change
	w, err := s.Watch(func(batch []registry.Change) {
		mu.Lock()
		seen = append(seen, batch...)
		mu.Unlock()
	})
	require.NoError(t, err)
	defer w.Close()
	saw := func(want registry.Change) bool {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range seen {
			if c == want || c.Kind == registry.ChangeAll {
				return true
			}
		}
		return false
	}
	// A barrier: the watch may start a little after Watch returns (fsnotify), and a store whose
	// watch replays its stream in order (NATS) may still deliver the writes above after Watch
	// returned; those would satisfy the waits below before the writes they are about. Once a
	// sentinel written after them is reported, they have been, and what was seen is forgotten.
	// (A sentinel written before an fsnotify watch started is never reported: a new one each second.)
	barrier := func() bool {
		for i := range int(waitFor / time.Second) {
			name := fmt.Sprintf("sentinel%d", i)
			_, err := writer.PutRole(contract(name, "barrier"), t0)
			require.NoError(t, err)
			for end := time.Now().Add(time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
				if saw(registry.Change{Kind: registry.ChangeRole, Role: name}) {
					return true
				}
			}
		}
		return false
	}
	require.True(t, barrier(), "the watch never reported a role written after it started")
	mu.Lock()
	seen = nil
	mu.Unlock()
	_, err = writer.Update("r", "m", func(a *registry.Artifact, _ bool) error { a.Lifecycle = registry.Blessed; return nil })
	require.NoError(t, err)
	require.Eventually(t, func() bool { return saw(registry.Change{Kind: registry.ChangeArtifact, Role: "r", Method: "m"}) },
		waitFor, 5*time.Millisecond, "the watch reports the other handle's artifact write")
	if a, ok := s.Lookup("r", "m"); ok {
		assert.Equal(t, registry.Blessed, a.Lifecycle, "after the change is reported, no stale snapshot is served")
	}
	a, err := s.Load("r", "m")
	require.NoError(t, err)
	assert.Equal(t, registry.Blessed, a.Lifecycle)

	_, err = writer.PutRole(contract("r", "second"), t0)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return saw(registry.Change{Kind: registry.ChangeRole, Role: "r"}) },
		waitFor, 5*time.Millisecond, "the watch reports the other handle's role write")
	r, err := s.Role("r")
	require.NoError(t, err)
	assert.Equal(t, "second", r.Purpose)
	require.NoError(t, w.Close())
}

func testKnowledge(t *testing.T, open Open) {
	s := open(t)
	docs := s.Knowledge()
	if docs == nil {
		t.Skip("this backend keeps knowledge in LocalDir()/knowledge (the learner's own files)")
	}
	data, ver, err := docs.Read("go.yaml")
	require.NoError(t, err)
	assert.Nil(t, data)
	assert.Empty(t, ver)
	require.NoError(t, docs.Modify("go.yaml", func(old []byte) ([]byte, error) {
		assert.Nil(t, old)
		return []byte("v: 1\n"), nil
	}))
	data, ver1, err := open(t).Knowledge().Read("go.yaml")
	require.NoError(t, err)
	assert.Equal(t, "v: 1\n", string(data))
	assert.NotEmpty(t, ver1)
	want := errors.New("abort")
	assert.ErrorIs(t, docs.Modify("go.yaml", func([]byte) ([]byte, error) { return []byte("x"), want }), want)
	_, ver2, err := docs.Read("go.yaml")
	require.NoError(t, err)
	assert.Equal(t, ver1, ver2, "an aborted Modify writes nothing")

	handles := []registry.Docs{docs, open(t).Knowledge()}
	const perWorker, workers = 5, 3
	var wg sync.WaitGroup
	for hi, h := range handles {
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range perWorker {
					err := h.Modify("go.yaml", func(old []byte) ([]byte, error) {
						return append(append([]byte(nil), old...), fmt.Sprintf("- %d.%d.%d\n", hi, w, i)...), nil
					})
					assert.NoError(t, err)
				}
			}()
		}
	}
	wg.Wait()
	data, ver3, err := docs.Read("go.yaml")
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	assert.Len(t, lines, 1+len(handles)*workers*perWorker, "no concurrent Modify lost")
	assert.NotEqual(t, ver1, ver3)

	require.NoError(t, docs.Modify("python.yaml", func([]byte) ([]byte, error) { return []byte("p"), nil }))
	names, err := open(t).Knowledge().Names()
	require.NoError(t, err)
	assert.Equal(t, []string{"go.yaml", "python.yaml"}, names)

	where := docs.Quarantine("python.yaml", errors.New("does not parse"))
	assert.NotEmpty(t, where)
	data, _, err = docs.Read("python.yaml")
	require.NoError(t, err)
	assert.Nil(t, data, "a quarantined document reads as missing")
}

func testImport(t *testing.T, open Open) {
	s := open(t)
	imp, ok := s.(registry.Importer)
	if !ok {
		t.Skip("this backend does not implement registry.Importer")
	}
	used := t0.Add(2 * time.Hour)
	c := contract("r", "imported")
	rec := registry.RoleRecord{Contract: c, Fingerprint: c.Fingerprint(), CreatedAt: t0, UpdatedAt: t0.Add(time.Hour), LastUsedAt: &used, UsageCount: 42}
	require.NoError(t, imp.ImportRole(rec))
	a := &registry.Artifact{Role: "r", Method: "m", Lifecycle: registry.Candidate}
	for i := 1; i <= 4; i++ {
		a.Promote(fmt.Sprintf("package artifact // v%d", i), "initial_forge", "model", "pv", t0.Add(time.Duration(i)*time.Minute))
	}
	a.Lifecycle = registry.Blessed
	a.ContractFingerprint = c.Fingerprint()
	a.Counters = registry.Counters{SuccessCount: 9, FailureCount: 2, IntrinsicFailureCount: 1, CallerFailureCount: 1,
		TotalDurationNanos: 1100, MaxDurationNanos: 400, Recent: "sssisc", RecentFailureRate: 1.0 / 6}
	a.LastFailureClass, a.LastFailureReason = "caller", "bad args"
	a.RepairCountSinceRegen = 1
	a.LastUsedAt = &used
	require.NoError(t, imp.ImportArtifact(a))

	other := open(t)
	got, err := other.Load("r", "m")
	require.NoError(t, err)
	g, w := *got, *a
	g.MetricsApplied, w.MetricsApplied = nil, nil
	g.CreatedAt, w.CreatedAt = g.CreatedAt.UTC(), w.CreatedAt.UTC()
	u := g.LastUsedAt.UTC()
	g.LastUsedAt = &u
	for i := range g.History {
		g.History[i].CreatedAt = g.History[i].CreatedAt.UTC()
	}
	assert.Equal(t, w, g, "the artifact reads back as imported")
	r, err := other.Role("r")
	require.NoError(t, err)
	assert.Equal(t, int64(42), r.UsageCount)
	assert.Equal(t, "imported", r.Purpose)
	assert.True(t, used.Equal(*r.LastUsedAt))
	assert.True(t, t0.Add(time.Hour).Equal(r.UpdatedAt))

	sums, err := other.Summaries()
	require.NoError(t, err)
	require.Len(t, sums, 1)
	assert.Equal(t, a.Counters, sums[0].Counters)
	assert.Equal(t, registry.Blessed, sums[0].Lifecycle)

	// An import replaces what is there, and new calls count on top of the imported counters.
	a2 := *a
	a2.Lifecycle = registry.Durable
	require.NoError(t, imp.ImportArtifact(&a2))
	rec2 := other.NewRecorder(time.Hour)
	rec2.Record("r", "m", registry.Success, time.Nanosecond, "")
	rec2.Close()
	got, err = open(t).Load("r", "m")
	require.NoError(t, err)
	assert.Equal(t, registry.Durable, got.Lifecycle)
	assert.Equal(t, int64(10), got.SuccessCount)
	assert.Equal(t, "sssiscs", got.Recent)
	r, err = open(t).Role("r")
	require.NoError(t, err)
	assert.Equal(t, int64(43), r.UsageCount)
}

// testOutcomesStayWithTheirGeneration: an outcome recorded for one generation and flushed after a
// newer one was promoted (a call that failed and was repaired, a call still running the replaced
// code) counts in the method's totals, and never in the newer generation's recent window, last
// failure or durable promotion — in the flushing handle's cache, its Load, another handle and the
// listings alike.
func testOutcomesStayWithTheirGeneration(t *testing.T, open Open) {
	s := open(t)
	_, err := s.PutRole(contract("r", "p"), t0)
	require.NoError(t, err)
	create(t, s, "r", "m", "package artifact")
	rec := s.NewRecorder(time.Hour) // flush only when asked
	defer rec.Close()
	promote := func(b registry.Backend, code, trigger string) {
		t.Helper()
		_, err := b.Update("r", "m", func(a *registry.Artifact, _ bool) error {
			a.Promote(code, trigger, "m", "pv", t0)
			return nil
		})
		require.NoError(t, err)
	}
	check := func(b registry.Backend, who string, gen int, recent, lastClass string, life registry.Lifecycle, s, i int64) {
		t.Helper()
		for _, via := range []string{"cache", "load", "summaries"} {
			var a *registry.Artifact
			switch via {
			case "cache":
				var ok bool
				if a, ok = b.Lookup("r", "m"); !ok {
					continue // not cached (another handle): Load says the same
				}
			case "load":
				a, err = b.Load("r", "m")
				require.NoError(t, err)
			case "summaries":
				sums, err := b.Summaries()
				require.NoError(t, err)
				require.Len(t, sums, 1)
				a = &registry.Artifact{Generation: sums[0].Generation, Lifecycle: sums[0].Lifecycle, Counters: sums[0].Counters,
					LastFailureClass: sums[0].LastFailureClass}
			}
			w := who + " (" + via + ")"
			assert.Equal(t, gen, a.Generation, w)
			assert.Equal(t, recent, a.Recent, w+": the generation's own outcomes only")
			assert.Equal(t, lastClass, a.LastFailureClass, w)
			assert.Equal(t, life, a.Lifecycle, w)
			assert.Equal(t, s, a.SuccessCount, w+": every generation's successes")
			assert.Equal(t, i, a.IntrinsicFailureCount, w+": every generation's failures")
		}
	}

	// Gen 1 fails; the call repairs it (gen 2) and succeeds with the new code; a call still
	// running gen 1 fails after that. One flush, after the promotion.
	rec.RecordGen("r", "m", 1, registry.IntrinsicFailure, time.Millisecond, "panic: gen 1")
	promote(s, "package artifact // repaired", "repair:intrinsic")
	rec.RecordGen("r", "m", 2, registry.Success, time.Millisecond, "")
	rec.RecordGen("r", "m", 1, registry.IntrinsicFailure, time.Millisecond, "panic: gen 1 again")
	rep := rec.Flush()
	assert.Equal(t, int64(3), rep.Merged[registry.Key{Role: "r", Method: "m"}], "every call is merged")
	check(s, "the flushing handle", 2, "s", "", registry.Candidate, 1, 2)
	check(open(t), "another handle", 2, "s", "", registry.Candidate, 1, 2)

	// Gen 1's outcomes flushed alone: its successes (DurableAfter of them) do not prove gen 2,
	// and its failures do not judge it.
	for i := 0; i < registry.DurableAfter; i++ {
		rec.RecordGen("r", "m", 1, registry.Success, time.Millisecond, "")
	}
	rec.RecordGen("r", "m", 1, registry.AdaptiveFailure, time.Millisecond, "drift")
	rec.Flush()
	check(s, "after gen 1's successes", 2, "s", "", registry.Candidate, 4, 2)
	check(open(t), "another handle after gen 1's successes", 2, "s", "", registry.Candidate, 4, 2)

	// Gen 2's own successes prove it; its own failure is its last failure.
	rec.RecordGen("r", "m", 2, registry.Success, time.Millisecond, "")
	rec.RecordGen("r", "m", 2, registry.Success, time.Millisecond, "")
	rec.Flush()
	check(s, "after gen 2's successes", 2, "sss", "", registry.Durable, 6, 2)
	check(open(t), "another handle after gen 2's successes", 2, "sss", "", registry.Durable, 6, 2)
	rec.RecordGen("r", "m", 2, registry.ExtrinsicFailure, time.Millisecond, "HTTP 503")
	rec.Flush()
	check(open(t), "after gen 2's failure", 2, "ssse", "extrinsic", registry.Durable, 6, 2)

	// A recorder that never loaded the artifact (another process) flushes gen 1's outcomes.
	late := open(t).NewRecorder(time.Hour)
	late.RecordGen("r", "m", 1, registry.IntrinsicFailure, time.Millisecond, "panic: gen 1, late")
	late.Close()
	check(open(t), "after another process's late flush", 2, "ssse", "extrinsic", registry.Durable, 6, 3)

	// A rollback makes gen 1's code gen 3: gen 1's and gen 2's late outcomes are not gen 3's.
	_, err = s.Update("r", "m", func(a *registry.Artifact, _ bool) error { return a.Rollback(1, t0) })
	require.NoError(t, err)
	rec.RecordGen("r", "m", 2, registry.IntrinsicFailure, time.Millisecond, "panic: gen 2")
	rec.RecordGen("r", "m", 1, registry.IntrinsicFailure, time.Millisecond, "panic: gen 1")
	rec.RecordGen("r", "m", 3, registry.Success, time.Millisecond, "")
	rec.Flush()
	check(s, "after the rollback", 3, "s", "", registry.Durable, 7, 5)
	check(open(t), "another handle after the rollback", 3, "s", "", registry.Durable, 7, 5)

	// An outcome recorded without its generation (Record) is judged with the generation it is
	// merged into, as before outcomes carried one.
	rec.Record("r", "m", registry.CallerFailure, time.Millisecond, "bad args")
	rec.Flush()
	check(open(t), "after an outcome of no known generation", 3, "sc", "caller", registry.Durable, 7, 5)
	r, err := open(t).Role("r")
	require.NoError(t, err)
	assert.Equal(t, int64(3+4+2+1+1+3+1), r.UsageCount, "the role's usage counts every call")
}

// testAnotherHandlesGeneration: a handle (a process) records outcomes of the generation it runs
// while another handle regenerates; its flush, after the regeneration, leaves the new generation's
// window, last failure and lifecycle alone, while a third handle's outcomes of the new generation
// merged meanwhile keep theirs.
func testAnotherHandlesGeneration(t *testing.T, open Open) {
	a1, a2 := open(t), open(t)
	_, err := a1.PutRole(contract("r", "p"), t0)
	require.NoError(t, err)
	create(t, a1, "r", "m", "package artifact")
	_, err = a2.Load("r", "m") // both handles run gen 1
	require.NoError(t, err)
	r1, r2 := a1.NewRecorder(time.Hour), a2.NewRecorder(time.Hour)
	for i := 0; i < 4; i++ {
		r1.RecordGen("r", "m", 1, registry.IntrinsicFailure, time.Millisecond, "panic")
	}
	_, err = a2.Update("r", "m", func(a *registry.Artifact, _ bool) error {
		a.Promote("package artifact // gen 2", "regenerate:test", "m", "pv", t0)
		return nil
	})
	require.NoError(t, err)
	r2.RecordGen("r", "m", 2, registry.Success, time.Millisecond, "")
	r2.Close()
	r1.Close()
	for _, b := range []registry.Backend{a1, a2, open(t)} {
		a, err := b.Load("r", "m")
		require.NoError(t, err)
		assert.Equal(t, 2, a.Generation)
		assert.Equal(t, "s", a.Recent, "gen 1's failures stay out of gen 2's window")
		assert.Zero(t, a.RecentFailureRate)
		assert.Empty(t, a.LastFailureClass)
		assert.Equal(t, registry.Candidate, a.Lifecycle)
		assert.Equal(t, int64(4), a.IntrinsicFailureCount, "and count in the method's totals")
		assert.Equal(t, int64(1), a.SuccessCount)
	}
}

// testSample: the sample of real calls an artifact keeps (safe regeneration) is written with the
// artifact, read back by another handle (another process or machine), kept by a metrics flush and
// dropped when new code is promoted.
func testSample(t *testing.T, open Open) {
	s := open(t)
	create(t, s, "r", "m", "package artifact\n// v1")
	add := []registry.SampleEntry{
		{Args: json.RawMessage(`{"b":2, "a":1}`), Value: json.RawMessage(`3`), Gen: 1, At: t0, Client: "billing"},
		{Args: json.RawMessage(`{"a":5,"b":5}`), Err: "too big", Gen: 1, At: t0},
	}
	_, err := s.Update("r", "m", func(a *registry.Artifact, _ bool) error {
		a.Sample, _ = registry.MergeSample(a.Sample, add, a.Generation, registry.DefaultSampleMax, registry.DefaultSampleMaxBytes)
		return nil
	})
	require.NoError(t, err)
	rec := s.NewRecorder(time.Hour)
	rec.RecordGen("r", "m", 1, registry.Success, time.Millisecond, "")
	rec.Close()

	a, err := open(t).Load("r", "m")
	require.NoError(t, err)
	require.Len(t, a.Sample, 2)
	assert.JSONEq(t, `{"a":1,"b":2}`, string(a.Sample[0].Args))
	assert.JSONEq(t, `3`, string(a.Sample[0].Value))
	assert.Equal(t, "too big", a.Sample[1].Err)
	assert.Equal(t, "billing", a.Sample[0].Client, "the client that offered the input (forge.ShadowPolicy)")
	assert.Empty(t, a.Sample[1].Client)
	assert.EqualValues(t, 1, a.SuccessCount)

	_, err = s.Update("r", "m", func(a *registry.Artifact, _ bool) error {
		a.Promote("package artifact\n// v2", "regenerate:operator", "m", "pv", t0)
		return nil
	})
	require.NoError(t, err)
	a, err = open(t).Load("r", "m")
	require.NoError(t, err)
	assert.Empty(t, a.Sample, "a new generation does not inherit the answers of the code it replaced")
}
