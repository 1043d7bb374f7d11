package nats

import (
	"encoding/json"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/artifactforge/forge/registry/nats/embedded"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/registry"
)

// bulkFixture is a store with good artifacts (some with flushed metrics), a record that does not
// parse, one that names another key, one of a newer schema, metrics that do not parse, a key that
// is not an artifact's, a deleted artifact, and roles (one damaged, one with usage).
func bulkFixture(t *testing.T) (*FleetStore, string) {
	t.Helper()
	url := singleNoSync(t)
	f := openFleet(t, url, "bulk")
	ctx := testCtx(t)
	for _, k := range []registry.Key{{Role: "r1", Method: "a"}, {Role: "r1", Method: "b"}, {Role: "r2", Method: "c"}, {Role: "r2", Method: "gone"}} {
		_, err := f.Update(k.Role, k.Method, func(a *registry.Artifact, _ bool) error {
			a.Promote("package artifact // "+k.Method, "initial_forge", "m", "pv", time.Now())
			return nil
		})
		require.NoError(t, err)
	}
	_, err := f.PutRole(registry.Contract{Role: "r1", Purpose: "tools"}, time.Now())
	require.NoError(t, err)
	_, err = f.PutRole(registry.Contract{Role: "r2", Purpose: "more tools"}, time.Now())
	require.NoError(t, err)
	rec := f.NewRecorder(time.Hour)
	for range 3 {
		rec.Record("r1", "a", registry.Success, time.Millisecond, "")
	}
	rec.Record("r1", "a", registry.IntrinsicFailure, time.Millisecond, "boom")
	rec.Record("r2", "c", registry.Success, time.Millisecond, "")
	require.Empty(t, rec.Flush().Dropped)
	rec.Close()
	gone, _ := f.st.ArtifactKey("r2", "gone")
	require.NoError(t, f.arts.Delete(ctx, gone, 0))

	raw := func(key string, v []byte) {
		_, err := f.st.Data.Put(ctx, key, v)
		require.NoError(t, err)
	}
	raw("artifacts.r2.bad", []byte("{not json"))
	e, err := f.st.Data.Get(ctx, "artifacts.r1.a")
	require.NoError(t, err)
	raw("artifacts.r2.moved", e.Value()) // names r1.a
	newer := newArtifact("r2", "newer", "package artifact")
	newer.SchemaVersion = registry.SchemaVersion + 1
	b, err := json.Marshal(newer)
	require.NoError(t, err)
	raw("artifacts.r2.newer", b)
	raw("artifacts.r3", []byte("{}")) // not an artifact key: not listed
	raw("roles.broken", []byte("[]"))
	_, err = f.st.MetricsKV.Put(ctx, "r1.b", []byte("not metrics"))
	require.NoError(t, err)
	return f, url
}

func summaryLine(s registry.Summary) string {
	if s.Err != nil {
		return fmt.Sprintf("%s.%s err=%v", s.Role, s.Method, s.Err)
	}
	b, _ := json.Marshal(s)
	return string(b)
}

// TestFleetBulkSummariesMatchPerKey: the bulk Summaries lists exactly what the per-key reads list
// (the same rows, damaged ones as Err rows with the same error, in the same order).
func TestFleetBulkSummariesMatchPerKey(t *testing.T) {
	f, _ := bulkFixture(t)
	bulk, err := f.Summaries()
	require.NoError(t, err)
	perKey, err := f.summariesPerKey()
	require.NoError(t, err)
	var got, want []string
	for _, s := range bulk {
		got = append(got, summaryLine(s))
	}
	for _, s := range perKey {
		want = append(want, summaryLine(s))
	}
	assert.Equal(t, want, got)
	var keys []string
	for _, s := range bulk {
		keys = append(keys, s.Role+"."+s.Method)
	}
	assert.Equal(t, []string{"r1.a", "r1.b", "r2.bad", "r2.c", "r2.moved", "r2.newer"}, keys)
	assert.True(t, sort.SliceIsSorted(bulk, func(i, j int) bool { return keys[i] < keys[j] }))
	byKey := map[string]registry.Summary{}
	for _, s := range bulk {
		byKey[s.Role+"."+s.Method] = s
	}
	assert.NoError(t, byKey["r1.a"].Err)
	assert.ErrorIs(t, byKey["r1.b"].Err, registry.ErrCorrupt, "its metrics do not parse")
	assert.ErrorIs(t, byKey["r2.bad"].Err, registry.ErrCorrupt)
	assert.ErrorIs(t, byKey["r2.moved"].Err, registry.ErrCorrupt)
	assert.ErrorIs(t, byKey["r2.newer"].Err, registry.ErrIncompatible)
	a, err := f.Peek("r1", "a")
	require.NoError(t, err)
	assert.Equal(t, int64(3), a.SuccessCount, "the metrics are merged")
	assert.Equal(t, summaryLine(registry.SummaryOf(a)), summaryLine(byKey["r1.a"]))
}

// TestFleetBulkEachMatchesLoad: Each gives, per key, what Load gives.
func TestFleetBulkEachMatchesLoad(t *testing.T) {
	f, url := bulkFixture(t)
	other := openFleet(t, url, "bulk")
	var keys []registry.Key
	require.NoError(t, f.Each(func(k registry.Key, a *registry.Artifact, err error) error {
		keys = append(keys, k)
		la, lerr := other.Load(k.Role, k.Method)
		if lerr != nil {
			require.Error(t, err, "%v", k)
			assert.Equal(t, lerr.Error(), err.Error(), "%v", k)
		} else {
			require.NoError(t, err, "%v", k)
		}
		if la == nil {
			assert.Nil(t, a, "%v", k)
		} else {
			require.NotNil(t, a, "%v", k)
			assert.Equal(t, la.SuccessCount, a.SuccessCount, "%v", k)
			assert.Equal(t, la.FailureCount, a.FailureCount, "%v", k)
			assert.Equal(t, la.Code, a.Code, "%v", k)
		}
		return nil
	}))
	assert.Len(t, keys, 6)
	_, ok := f.Lookup("r1", "a")
	assert.True(t, ok, "Each caches what it read, as Load does")
}

// TestFleetBulkRoles: Roles lists the good roles with their usage, leaving out the damaged one.
func TestFleetBulkRoles(t *testing.T) {
	f, url := bulkFixture(t)
	roles, err := f.Roles()
	require.NoError(t, err)
	require.Len(t, roles, 2)
	assert.Equal(t, "r1", roles[0].Role)
	assert.Equal(t, int64(4), roles[0].UsageCount)
	assert.Equal(t, "r2", roles[1].Role)
	assert.Equal(t, int64(1), roles[1].UsageCount)
	one, err := openFleet(t, url, "bulk").Role("r1")
	require.NoError(t, err)
	assert.Equal(t, one.UsageCount, roles[0].UsageCount)
}

// TestFleetBulkUnreachableStoreFails: with the server gone, the listings fail with the store's
// advice instead of hanging or listing nothing.
func TestFleetBulkUnreachableStoreFails(t *testing.T) {
	n, err := embedded.StartNode(embedded.NodeConfig{Name: "bulkdown", Dir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(n.Stop)
	f := openFleet(t, n.URL(), "bulkdown")
	f.opTimeout = time.Second
	_, err = f.Update("r", "m", func(x *registry.Artifact, _ bool) error {
		x.Promote("package artifact", "initial_forge", "m", "pv", time.Now())
		return nil
	})
	require.NoError(t, err)
	n.Stop()
	done := make(chan error, 1)
	go func() {
		_, err := f.Summaries()
		done <- err
	}()
	select {
	case err := <-done:
		require.Error(t, err)
		assert.Contains(t, err.Error(), f.Location())
		assert.Contains(t, err.Error(), "nats-server")
	case <-time.After(30 * time.Second):
		t.Fatal("Summaries hangs on an unreachable store")
	}
	_, err = f.Roles()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nats-server")
}

// TestFleetBulkHonoursWhatTheWatchReported: a record the watch reported deleted after the
// revision the bulk read found is left out, as Load answers "not found" for it; one the watch
// reported at a revision the store never reaches fails the listing (as Load would) instead of
// listing the older record.
func TestFleetBulkHonoursWhatTheWatchReported(t *testing.T) {
	f, _ := bulkFixture(t)
	k := registry.Key{Role: "r2", Method: "c"}
	f.mu.Lock()
	f.latest[k] = seen{rev: 1 << 40, deleted: true}
	f.mu.Unlock()
	sums, err := f.Summaries()
	require.NoError(t, err)
	for _, s := range sums {
		assert.NotEqual(t, k, registry.Key{Role: s.Role, Method: s.Method}, "reported deleted")
	}
	_, err = f.Load(k.Role, k.Method)
	assert.ErrorIs(t, err, registry.ErrNotFound)

	f.opTimeout = time.Second
	f.mu.Lock()
	f.latest[k] = seen{rev: 1 << 40}
	f.mu.Unlock()
	_, err = f.Summaries()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no replica answered with revision")
}

// TestFleetBulkEachMatchesPerRole: the bulk Each gives the same keys, in the same order, with the
// same views and errors as the role-at-a-time Each it replaced.
func TestFleetBulkEachMatchesPerRole(t *testing.T) {
	f, _ := bulkFixture(t)
	line := func(out *[]string) func(k registry.Key, a *registry.Artifact, err error) error {
		return func(k registry.Key, a *registry.Artifact, err error) error {
			s := k.Role + "." + k.Method
			if a != nil {
				s += fmt.Sprintf(" gen=%d success=%d failure=%d code=%q", a.Generation, a.SuccessCount, a.FailureCount, a.Code)
			}
			if err != nil {
				s += " err=" + err.Error()
			}
			*out = append(*out, s)
			return nil
		}
	}
	var bulk, perRole []string
	require.NoError(t, f.eachBulk(line(&bulk)))
	require.NoError(t, f.eachPerRole(line(&perRole)))
	assert.Equal(t, perRole, bulk)
	assert.Len(t, bulk, 6)
}
