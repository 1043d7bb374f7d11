package registry

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The buffer keeps one generation's window per flush: the newest generation recorded starts it
// afresh, an older generation's outcome (a call still running replaced code) stays out of it, and
// every outcome counts in the totals.
func TestRecordBufferKeepsOneGenerationsWindow(t *testing.T) {
	k := Key{"r", "m"}
	b := NewRecordBuffer()
	h := b.Handle("r", "m")
	b.RecordGen("r", "m", 1, IntrinsicFailure, time.Millisecond, "gen 1")
	h.RecordGen(2, Success, time.Millisecond, "")
	b.RecordGen("r", "m", 1, AdaptiveFailure, 5*time.Millisecond, "gen 1, late")
	h.RecordGen(2, ExtrinsicFailure, time.Millisecond, "HTTP 503")
	d := b.Take()[k]
	assert.Equal(t, int64(4), d.Calls)
	assert.Equal(t, Counters{SuccessCount: 1, FailureCount: 3, IntrinsicFailureCount: 1, AdaptiveFailureCount: 1, ExtrinsicFailureCount: 1,
		TotalDurationNanos: int64(8 * time.Millisecond), MaxDurationNanos: int64(5 * time.Millisecond), Recent: "se"}, d.Counters)
	assert.Equal(t, 2, d.Gen)
	assert.Equal(t, int64(2), d.GenCalls)
	assert.Equal(t, int64(1), d.GenFailures)
	assert.Equal(t, "extrinsic", d.LastClass)
	assert.Equal(t, "HTTP 503", d.LastReason)

	// A flush that could not write gives the delta back; what was recorded since is newer.
	for _, tc := range []struct {
		name                 string
		sinceGen             int
		since                Outcome
		gen                  int
		recent, class        string
		genCalls, genFailure int64
	}{
		{"same generation", 2, Success, 2, "ses", "extrinsic", 3, 1},
		{"a newer generation since", 3, IntrinsicFailure, 3, "i", "intrinsic", 1, 1},
		{"an older generation since", 1, CallerFailure, 2, "se", "extrinsic", 2, 1},
		{"no known generation since", 0, CallerFailure, 2, "sec", "caller", 3, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := NewRecordBuffer()
			b.RecordGen("r", "m", tc.sinceGen, tc.since, time.Millisecond, string(outcomeLetters[tc.since]))
			b.GiveBack(k, d)
			got := b.Take()[k]
			assert.Equal(t, d.Calls+1, got.Calls, "every outcome in the totals")
			assert.Equal(t, d.Counters.FailureCount+int64(min(1, int(tc.since))), got.Counters.FailureCount)
			assert.Equal(t, tc.gen, got.Gen)
			assert.Equal(t, tc.recent, got.Counters.Recent)
			assert.Equal(t, tc.class, got.LastClass)
			assert.Equal(t, tc.genCalls, got.GenCalls)
			assert.Equal(t, tc.genFailure, got.GenFailures)
		})
	}
}

// ApplyTo: the totals take every outcome, the window, the last failure and the promotion only the
// artifact's own generation's (or an outcome of no known generation).
func TestApplyToJudgesTheArtifactsGenerationOnly(t *testing.T) {
	now := t0.Add(time.Minute)
	stale := BufferedDelta{Counters: Counters{SuccessCount: 3, FailureCount: 1, IntrinsicFailureCount: 1, Recent: "sssi"},
		Calls: 4, LastClass: "intrinsic", LastReason: "panic", Gen: 1, GenCalls: 4, GenFailures: 1}
	a := &Artifact{Generation: 2, Lifecycle: Candidate}
	stale.ApplyTo(a, now)
	assert.Equal(t, int64(3), a.SuccessCount)
	assert.Equal(t, int64(1), a.IntrinsicFailureCount)
	assert.Empty(t, a.Recent)
	assert.Zero(t, a.RecentFailureRate)
	assert.Empty(t, a.LastFailureClass)
	assert.Equal(t, Candidate, a.Lifecycle, "another generation's successes prove nothing")
	require.NotNil(t, a.LastUsedAt)
	assert.Equal(t, now, *a.LastUsedAt, "a call was made")

	own := stale
	own.Gen = 2
	own.ApplyTo(a, now)
	assert.Equal(t, "sssi", a.Recent)
	assert.Equal(t, 0.25, a.RecentFailureRate)
	assert.Equal(t, "intrinsic", a.LastFailureClass)
	assert.Equal(t, Candidate, a.Lifecycle, "a health failure in the window")

	b := &Artifact{Generation: 7, Lifecycle: Candidate}
	legacy := BufferedDelta{Counters: Counters{SuccessCount: 3, Recent: "sss"}, Calls: 3}
	legacy.ApplyTo(b, now)
	assert.Equal(t, "sss", b.Recent, "no known generation: judged with the artifact's")
	assert.Equal(t, Durable, b.Lifecycle)

	// Promotion counts the window's successes, not the method's: a repaired candidate whose
	// method succeeded a hundred times before is proven by its own DurableAfter successes.
	c := &Artifact{Generation: 2, Lifecycle: Candidate, Counters: Counters{SuccessCount: 100}}
	BufferedDelta{Counters: Counters{SuccessCount: 2, Recent: "ss"}, Calls: 2, Gen: 2, GenCalls: 2}.ApplyTo(c, now)
	assert.Equal(t, Candidate, c.Lifecycle)
	BufferedDelta{Counters: Counters{SuccessCount: 1, Recent: "s"}, Calls: 1, Gen: 2, GenCalls: 1}.ApplyTo(c, now)
	assert.Equal(t, Durable, c.Lifecycle)
}

// The journal line carries the generation; compaction folds another generation's outcomes into
// the file's totals only; a line without a generation (written before lines carried one) is
// merged into whatever generation the file holds.
func TestJournalKeepsTheGeneration(t *testing.T) {
	s := storeWithMethod(t)
	rec := NewRecorder(s, time.Hour)
	rec.RecordGen("r", "m", 1, IntrinsicFailure, time.Millisecond, "panic")
	_, err := s.Update("r", "m", func(a *Artifact, _ bool) error {
		a.Promote("package artifact // 2", "repair:intrinsic", "m", "pv", t0)
		return nil
	})
	require.NoError(t, err)
	rec.RecordGen("r", "m", 2, Success, time.Millisecond, "")
	path := sealed(t, rec)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"recent":"s","gen":2`)
	var r journalRecord
	require.True(t, parseRecordFast([]byte(strings.TrimSuffix(string(data), "\n")), &r), "a success line takes the fast path")
	assert.Equal(t, int64(2), r.Gen)

	// A line of no known generation, as an older forge wrote it, in another sealed journal.
	old := `{"seq":1,"role":"r","method":"m","at":"2026-11-25T12:00:00Z","calls":1,"c":1,"f":1,"recent":"c","class":"caller","reason":"bad args"}` + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(s.metricsPath(), "1-1-old"+journalSuffix), []byte(old), 0o644))

	check := func(who string, a *Artifact) {
		t.Helper()
		assert.Equal(t, 2, a.Generation, who)
		assert.Equal(t, "cs", a.Recent, who+": the old line (older) and gen 2's success, not gen 1's failure")
		assert.Equal(t, "caller", a.LastFailureClass, who)
		assert.Equal(t, int64(1), a.IntrinsicFailureCount, who+": gen 1's failure in the totals")
		assert.Equal(t, int64(1), a.CallerFailureCount, who)
		assert.Equal(t, int64(1), a.SuccessCount, who)
		assert.Equal(t, int64(2), a.FailureCount, who)
	}
	other, err := Open(s.Root())
	require.NoError(t, err)
	a, err := other.Load("r", "m")
	require.NoError(t, err)
	check("merged by a reader", a)
	rep, err := other.Compact()
	require.NoError(t, err)
	assert.Equal(t, 2, rep.Journals)
	raw, err := os.ReadFile(s.ArtifactPath("r", "m"))
	require.NoError(t, err)
	a, err = DecodeArtifact(raw)
	require.NoError(t, err)
	check("folded into the file", a)
	rec.Close()
}

// BenchmarkRecordHandleGen is the warm path's record: one outcome through a handle, with its
// generation (compare BenchmarkRecord, by key and of no known generation).
func BenchmarkRecordHandleGen(b *testing.B) {
	h := NewRecordBuffer().Handle("text", "upper")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.RecordGen(1, Success, time.Microsecond, "")
	}
}
