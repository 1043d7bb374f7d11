package registry

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// importSource builds a store with one role and one artifact that has three kept generations, a
// lifecycle an operator set, and counters both in the file (compacted) and in a journal.
func importSource(t *testing.T) (*Store, *RoleRecord, *Artifact) {
	t.Helper()
	src, err := Open(t.TempDir())
	require.NoError(t, err)
	_, err = src.PutRole(Contract{Role: "text", Purpose: "string tools", Methods: map[string]string{"upper": "func Upper(s string) string"}}, t0)
	require.NoError(t, err)
	for i := 1; i <= 4; i++ {
		_, err := src.Update("text", "upper", func(a *Artifact, _ bool) error {
			a.Promote("package artifact\n// v"+string(rune('0'+i)), "initial_forge", "m", "pv", t0.Add(time.Duration(i)*time.Minute))
			return nil
		})
		require.NoError(t, err)
	}
	rec := NewRecorder(src, time.Hour)
	for i := 0; i < 5; i++ {
		rec.Record("text", "upper", Success, time.Millisecond, "")
	}
	rec.Record("text", "upper", AdaptiveFailure, 2*time.Millisecond, "timeout")
	rec.Flush()
	_, err = src.Compact() // the live journal stays: half compacted, half journal is fine too
	require.NoError(t, err)
	rec.Record("text", "upper", ExtrinsicFailure, time.Millisecond, "HTTP 503")
	rec.Close()
	_, err = src.Update("text", "upper", func(a *Artifact, _ bool) error { a.Lifecycle = Blessed; return nil })
	require.NoError(t, err)
	a, err := src.Load("text", "upper")
	require.NoError(t, err)
	require.Len(t, a.History, MaxHistory)
	require.Equal(t, 4, a.Generation)
	require.Equal(t, int64(7), a.SuccessCount+a.FailureCount)
	r, err := src.Role("text")
	require.NoError(t, err)
	require.Equal(t, int64(7), r.UsageCount)
	return src, r, a
}

// sameJSON compares what two records say, without the metrics stamps (which name each store's
// own journals).
func sameJSON(t *testing.T, want, got any) {
	t.Helper()
	norm := func(v any) map[string]any {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(b, &m))
		delete(m, "metrics_applied")
		return m
	}
	assert.Equal(t, norm(want), norm(got))
}

func TestImportWritesRecordsExactly(t *testing.T) {
	_, role, art := importSource(t)
	dst, err := Open(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, dst.ImportRole(*role))
	require.NoError(t, dst.ImportArtifact(art))

	for _, s := range []*Store{dst, mustOpen(t, dst.Root())} { // this process, and another one
		got, err := s.Load("text", "upper")
		require.NoError(t, err)
		sameJSON(t, art, got)
		r, err := s.Role("text")
		require.NoError(t, err)
		sameJSON(t, role, r)
		sums, err := s.Summaries()
		require.NoError(t, err)
		require.Len(t, sums, 1)
		assert.Equal(t, Blessed, sums[0].Lifecycle)
		assert.Equal(t, 4, sums[0].Generation)
		assert.Equal(t, art.Counters, sums[0].Counters)
		assert.Equal(t, art.LastUsedAt, sums[0].LastUsedAt)
	}
	n, err := dst.RebuildIndex()
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	rep, err := dst.Doctor()
	require.NoError(t, err)
	assert.Empty(t, rep.Quarantined, "an imported store is sound")
	assert.Empty(t, rep.Pending)
}

// Importing over records the destination already has (with calls still in its journals)
// replaces them: the destination's pending calls are not added on top of the imported counters,
// and calls made after the import are.
func TestImportReplacesAndStampsPendingJournals(t *testing.T) {
	_, role, art := importSource(t)
	dst, err := Open(t.TempDir())
	require.NoError(t, err)
	_, err = dst.PutRole(Contract{Role: "text", Purpose: "older purpose"}, t0)
	require.NoError(t, err)
	newArtifact(t, dst, "text", "upper", "package artifact\n// older")
	other := mustOpen(t, dst.Root()) // another process with a live journal holding calls
	rec := NewRecorder(other, time.Hour)
	defer rec.Close()
	for i := 0; i < 3; i++ {
		rec.Record("text", "upper", IntrinsicFailure, time.Millisecond, "panic")
	}
	rec.Flush()
	before, err := dst.Load("text", "upper")
	require.NoError(t, err)
	require.Equal(t, int64(3), before.IntrinsicFailureCount, "the destination sees the pending calls before the import")

	require.NoError(t, dst.ImportRole(*role))
	require.NoError(t, dst.ImportArtifact(art))
	got, err := mustOpen(t, dst.Root()).Load("text", "upper")
	require.NoError(t, err)
	sameJSON(t, art, got)
	r, err := mustOpen(t, dst.Root()).Role("text")
	require.NoError(t, err)
	sameJSON(t, role, r)

	rec.Record("text", "upper", Success, time.Millisecond, "")
	rec.Flush()
	after, err := mustOpen(t, dst.Root()).Load("text", "upper")
	require.NoError(t, err)
	assert.Equal(t, art.SuccessCount+1, after.SuccessCount, "a call after the import counts")
	assert.Equal(t, art.IntrinsicFailureCount, after.IntrinsicFailureCount)
	r, err = mustOpen(t, dst.Root()).Role("text")
	require.NoError(t, err)
	assert.Equal(t, role.UsageCount+1, r.UsageCount)

	// A compaction folds the journal into the files: still counted once.
	rec.Close()
	_, err = dst.Compact()
	require.NoError(t, err)
	after, err = mustOpen(t, dst.Root()).Load("text", "upper")
	require.NoError(t, err)
	assert.Equal(t, art.SuccessCount+1, after.SuccessCount)
	assert.Equal(t, art.IntrinsicFailureCount, after.IntrinsicFailureCount)
}

func TestImportRefusesDamagedRecords(t *testing.T) {
	_, role, art := importSource(t)
	dst, err := Open(t.TempDir())
	require.NoError(t, err)

	bad := *art
	bad.Code += "// tampered"
	err = dst.ImportArtifact(&bad)
	require.ErrorIs(t, err, ErrCorrupt)
	assert.Contains(t, err.Error(), "text.upper")

	hist := *art
	hist.History = append([]Generation(nil), art.History...)
	hist.History[2].Code = "tampered"
	require.ErrorIs(t, dst.ImportArtifact(&hist), ErrCorrupt)

	r := *role
	r.Purpose = "edited without a new fingerprint"
	err = dst.ImportRole(r)
	require.ErrorIs(t, err, ErrCorrupt)
	assert.Contains(t, err.Error(), "forge role add")

	keys, err := dst.List()
	require.NoError(t, err)
	assert.Empty(t, keys, "nothing was written")
	roles, err := dst.Roles()
	require.NoError(t, err)
	assert.Empty(t, roles)
}

func mustOpen(t *testing.T, root string) *Store {
	t.Helper()
	s, err := Open(root)
	require.NoError(t, err)
	return s
}
