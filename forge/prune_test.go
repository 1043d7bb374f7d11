package forge

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/registry"
	"github.com/artifactforge/forge/sandbox"
)

func TestUnused(t *testing.T) {
	cutoff := time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)
	before, after := cutoff.Add(-time.Hour), cutoff.Add(time.Hour)
	sum := func(method string, lc registry.Lifecycle, created time.Time, used *time.Time) registry.Summary {
		return registry.Summary{Role: "r", Method: method, Lifecycle: lc, CreatedAt: created, LastUsedAt: used}
	}
	for _, c := range []struct {
		name string
		sm   registry.Summary
		want bool
	}{
		{"used before the cutoff", sum("m", registry.Durable, before, &before), true},
		{"used at the cutoff", sum("m", registry.Durable, before, &cutoff), true},
		{"used after", sum("m", registry.Durable, before, &after), false},
		{"never used, created before", sum("m", registry.Candidate, before, nil), true},
		{"never used, created after", sum("m", registry.Candidate, after, nil), false},
		{"created before, used after", sum("m", registry.Durable, before, &after), false},
		{"blessed", sum("m", registry.Blessed, before, &before), false},
		{"archived already", sum("m", registry.Archived, before, &before), false},
		{"unreadable", registry.Summary{Role: "r", Method: "m", Err: errors.New("damaged")}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Unused([]registry.Summary{c.sm}, cutoff)
			assert.Equal(t, c.want, len(got) == 1, "%v", got)
		})
	}
}

var (
	pruneProbeOnce sync.Once
	pruneProbeMu   sync.Mutex
	pruneProbeArgs []any
)

// TestPruneArchivesAndPrunesCaches: Prune archives what was not used since the cutoff (only
// reporting in a dry run) and hands every registered backend's cache pruning the store's cache
// directory, the cutoff and the dry run.
func TestPruneArchivesAndPrunesCaches(t *testing.T) {
	pruneProbeOnce.Do(func() { // a name registers once per process
		sandbox.Register(sandbox.Backend{Name: "pruneprobe", Summary: "test: records its cache pruning",
			New: func(sandbox.Config) (sandbox.Sandbox, error) { return nil, errors.New("not for running") },
			PruneCache: func(dir string, since time.Time, dryRun bool) (sandbox.CacheReport, error) {
				pruneProbeMu.Lock()
				defer pruneProbeMu.Unlock()
				pruneProbeArgs = []any{dir, since, dryRun}
				return sandbox.CacheReport{Removed: []sandbox.CacheFile{{Path: dir + "/x", Bytes: 5}}, RemovedBytes: 5, Kept: 1, KeptBytes: 7}, nil
			}})
	})
	f := openForge(t, t.TempDir(), nil)
	now := time.Now()
	for _, m := range []string{"old", "new"} {
		_, err := f.store.Update("r", m, func(a *registry.Artifact, _ bool) error {
			a.Promote("package artifact\n", "initial_forge", "m", "pv", now.Add(-48*time.Hour))
			if m == "new" {
				used := now
				a.LastUsedAt = &used
			}
			return nil
		})
		require.NoError(t, err)
	}
	cutoff := now.Add(-24 * time.Hour)
	for _, dry := range []bool{true, false} {
		rep, err := f.Prune(context.Background(), cutoff, dry)
		require.NoError(t, err)
		assert.Equal(t, []registry.Key{{Role: "r", Method: "old"}}, rep.Archived)
		pruneProbeMu.Lock()
		assert.Equal(t, []any{cacheDir(f.Store().LocalDir()), cutoff, dry}, pruneProbeArgs)
		pruneProbeMu.Unlock()
		assert.GreaterOrEqual(t, rep.Cache.RemovedBytes, int64(5))
		assert.GreaterOrEqual(t, rep.Cache.Kept, 1)
		art, err := f.Store().Load("r", "old")
		require.NoError(t, err)
		assert.Equal(t, !dry, art.Lifecycle == registry.Archived, "dry run %v: %s", dry, art.Lifecycle)
	}
	rep, err := f.Prune(context.Background(), cutoff, false)
	require.NoError(t, err)
	assert.Empty(t, rep.Archived, "archived already")
}
