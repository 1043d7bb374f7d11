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

// sealed flushes rec and seals its journal, returning the journal's path.
func sealed(t *testing.T, rec *Recorder) string {
	t.Helper()
	rec.Flush()
	rec.jmu.Lock()
	defer rec.jmu.Unlock()
	require.NotNil(t, rec.j, "the flush opened a journal")
	p := rec.j.path
	rec.store.sealJournal(rec.j)
	rec.j = nil
	return p
}

func TestFlushAppendsOneJournalAndWritesNoArtifact(t *testing.T) {
	s := storeWithMethod(t)
	before, err := stampOf(s.ArtifactPath("r", "m"))
	require.NoError(t, err)
	rec := NewRecorder(s, time.Hour)
	defer rec.Close()
	rec.Record("r", "m", ExtrinsicFailure, time.Millisecond, "HTTP 503")
	rep := rec.Flush()
	require.Equal(t, int64(1), rep.Merged[Key{"r", "m"}])
	after, err := stampOf(s.ArtifactPath("r", "m"))
	require.NoError(t, err)
	assert.Equal(t, before, after, "a flush of counters does not rewrite the artifact file")
	st, err := s.Journals()
	require.NoError(t, err)
	assert.Equal(t, 1, st.Journals)

	other, err := Open(s.Root()) // another process reads file + journal
	require.NoError(t, err)
	a, err := other.Load("r", "m")
	require.NoError(t, err)
	assert.Equal(t, int64(1), a.ExtrinsicFailureCount)
	assert.Equal(t, "HTTP 503", a.LastFailureReason)
	r, err := other.Role("r")
	require.NoError(t, err)
	assert.Equal(t, int64(1), r.UsageCount)
}

// A compaction that crashed after folding its records into the files but before removing the
// journal runs again over the same records: the files' stamps keep them from counting twice.
func TestCompactionCrashBeforeRemovingTheJournalCountsOnce(t *testing.T) {
	s := storeWithMethod(t)
	newArtifact(t, s, "r", "n", "package artifact // n")
	rec := NewRecorder(s, time.Hour)
	defer rec.Close()
	for i := 0; i < 4; i++ {
		rec.Record("r", "m", Success, time.Millisecond, "")
	}
	rec.Record("r", "n", IntrinsicFailure, time.Millisecond, "panic: boom")
	p := sealed(t, rec)
	journal, err := os.ReadFile(p)
	require.NoError(t, err)

	rep, err := s.Compact()
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Journals)
	assert.Equal(t, 2, rep.Artifacts)
	_, err = os.Stat(p)
	require.Error(t, err, "the compacted journal is removed")

	require.NoError(t, os.WriteFile(p, journal, 0o644)) // the crash: the journal is still there
	for round := 0; round < 2; round++ {
		fresh, err := Open(s.Root())
		require.NoError(t, err)
		m, err := fresh.Load("r", "m")
		require.NoError(t, err)
		assert.Equal(t, int64(4), m.SuccessCount, "round %d", round)
		assert.Equal(t, Durable, m.Lifecycle)
		n, err := fresh.Load("r", "n")
		require.NoError(t, err)
		assert.Equal(t, int64(1), n.IntrinsicFailureCount)
		r, err := fresh.Role("r")
		require.NoError(t, err)
		assert.Equal(t, int64(5), r.UsageCount)
		_, err = fresh.Compact()
		require.NoError(t, err)
	}
	// The stamps of journals that are gone are dropped by the next write of the file.
	a, err := s.Update("r", "m", func(a *Artifact, _ bool) error { return nil })
	require.NoError(t, err)
	assert.Empty(t, a.MetricsApplied)
	assert.Equal(t, int64(4), a.SuccessCount)
}

// An Update (an operator's bless, a repair) folds what the journals hold, live ones included;
// the later compaction of the same journal does not count it again, and a reset stays a reset.
func TestUpdateFoldsLiveJournalAndCompactionSkipsIt(t *testing.T) {
	s := storeWithMethod(t)
	rec := NewRecorder(s, time.Hour)
	defer rec.Close()
	rec.Record("r", "m", Success, time.Millisecond, "")
	rec.Record("r", "m", Success, time.Millisecond, "")
	rec.Flush()

	operator, err := Open(s.Root())
	require.NoError(t, err)
	a, err := operator.Update("r", "m", func(a *Artifact, _ bool) error {
		assert.Equal(t, int64(2), a.SuccessCount, "the update sees the journal's records")
		a.Counters = Counters{} // bless --reset-metrics
		a.Lifecycle = Blessed
		return nil
	})
	require.NoError(t, err)
	assert.Zero(t, a.SuccessCount)

	rec.Record("r", "m", Success, time.Millisecond, "")
	sealed(t, rec)
	_, err = operator.Compact()
	require.NoError(t, err)
	fresh, err := Open(s.Root())
	require.NoError(t, err)
	a, err = fresh.Load("r", "m")
	require.NoError(t, err)
	assert.Equal(t, int64(1), a.SuccessCount, "only the call after the reset counts")
	assert.Equal(t, Blessed, a.Lifecycle)
}

// A crashed writer's torn last line is skipped; the complete records before it count.
func TestTornJournalLineIsSkipped(t *testing.T) {
	s := storeWithMethod(t)
	rec := NewRecorder(s, time.Hour)
	rec.Record("r", "m", Success, time.Millisecond, "")
	p := sealed(t, rec)
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"seq":2,"role":"r","method":"m","at":"2026-01-01T00:00:00Z","calls":5,"s":`)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	fresh, err := Open(s.Root())
	require.NoError(t, err)
	a, err := fresh.Load("r", "m")
	require.NoError(t, err)
	assert.Equal(t, int64(1), a.SuccessCount)
	rep, err := fresh.Compact()
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Records)
	a, err = fresh.Load("r", "m")
	require.NoError(t, err)
	assert.Equal(t, int64(1), a.SuccessCount)
	rec.Close()
}

func TestLiveJournalIsNotCompactedByOthers(t *testing.T) {
	s := storeWithMethod(t)
	rec := NewRecorder(s, time.Hour)
	rec.Record("r", "m", Success, time.Millisecond, "")
	rec.Flush()
	other, err := Open(s.Root())
	require.NoError(t, err)
	rep, err := other.Compact()
	require.NoError(t, err)
	assert.Equal(t, 0, rep.Journals)
	assert.Equal(t, 1, rep.Skipped, "its writer holds it")
	rec.Close() // seals it
	rep, err = other.Compact()
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Journals)
	a, err := other.Load("r", "m")
	require.NoError(t, err)
	assert.Equal(t, int64(1), a.SuccessCount)
}

func TestSummariesSurviveADamagedOrStaleIndex(t *testing.T) {
	s := storeWithMethod(t)
	newArtifact(t, s, "r", "n", "package artifact // n")
	sums, err := s.Summaries()
	require.NoError(t, err)
	require.Len(t, sums, 2)

	require.NoError(t, os.WriteFile(filepath.Join(s.Root(), indexDir, "r.json"), []byte("garbage"), 0o644))
	sums, err = s.Summaries()
	require.NoError(t, err)
	require.Len(t, sums, 2)
	_, _, ok := s.readIndex("r", nil)
	assert.True(t, ok, "the damaged index was rebuilt")

	// An artifact written behind the index's back (no entry update): its stamp differs.
	a, err := s.Load("r", "m")
	require.NoError(t, err)
	b := *a
	b.Generation, b.Lifecycle = 7, Degraded
	data, err := b.Encode()
	require.NoError(t, err)
	require.NoError(t, writeFileAtomic(s.ArtifactPath("r", "m"), data))
	sums, err = s.Summaries()
	require.NoError(t, err)
	require.Len(t, sums, 2)
	assert.Equal(t, 7, sums[0].Generation, "the file wins over the index")
	assert.Equal(t, Degraded, sums[0].Lifecycle)

	// A settled index is trusted whole, and still follows a new write (the directory changes).
	time.Sleep(IndexSettle + 10*time.Millisecond)
	_, err = s.RebuildIndex()
	require.NoError(t, err)
	h, _, ok := s.readIndex("r", nil)
	require.True(t, ok)
	assert.NotZero(t, h.Dir, "a settled directory stamp is recorded")
	require.NoError(t, os.Remove(s.ArtifactPath("r", "n")))
	sums, err = s.Summaries()
	require.NoError(t, err)
	assert.Len(t, sums, 1, "a removed file leaves the listing")
}

func TestSnapshotCacheIsBounded(t *testing.T) {
	s, err := OpenWith(t.TempDir(), OpenOptions{MaxCached: 16})
	require.NoError(t, err)
	_, err = s.PutRole(Contract{Role: "r", Purpose: "p"}, t0)
	require.NoError(t, err)
	for i := 0; i < 100; i++ {
		newArtifact(t, s, "r", "m"+string(rune('a'+i%26))+string(rune('a'+i/26)), "package artifact")
	}
	assert.LessOrEqual(t, s.Cached(), 16)
	assert.Positive(t, s.Cached())
	_, ok := s.Lookup("r", "mvd")
	if !ok {
		a, err := s.Load("r", "mvd")
		require.NoError(t, err)
		assert.Equal(t, "mvd", a.Method, "an evicted artifact is read again")
	}
}

// Flushes, loads, lookups, operator updates and compactions of two stores on one directory run
// at once; every recorded call is counted exactly once at the end.
func TestConcurrentFlushLoadUpdateCompact(t *testing.T) {
	root := t.TempDir()
	s, err := Open(root)
	require.NoError(t, err)
	_, err = s.PutRole(Contract{Role: "r", Purpose: "p"}, t0)
	require.NoError(t, err)
	keys := []string{"a", "b", "c", "d"}
	for _, m := range keys {
		newArtifact(t, s, "r", m, "package artifact // "+m)
	}
	other, err := Open(root)
	require.NoError(t, err)
	rec := NewRecorder(s, time.Hour)
	rec.maxAge = 20 * time.Millisecond // seal and compact in the background every few flushes
	rec2 := NewRecorder(other, time.Hour)
	rec2.maxAge = 30 * time.Millisecond

	const rounds = 60
	done := make(chan struct{})
	errs := make(chan error, 16)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // readers
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			for _, m := range keys {
				if _, ok := s.Lookup("r", m); !ok {
					if _, err := s.Load("r", m); err != nil {
						errs <- err
						return
					}
				}
				if _, err := other.Summaries(); err != nil {
					errs <- err
					return
				}
			}
		}
	}()
	go func() { // an operator touching the artifacts (folds live journals)
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			if _, err := other.Update("r", "b", func(a *Artifact, _ bool) error { a.ForceRegenerate = !a.ForceRegenerate; return nil }); err != nil {
				errs <- err
				return
			}
			if _, err := other.Compact(); err != nil {
				errs <- err
				return
			}
			time.Sleep(3 * time.Millisecond)
		}
	}()
	for i := 0; i < rounds; i++ {
		for _, m := range keys {
			rec.Record("r", m, Success, time.Microsecond, "")
			rec2.Record("r", m, CallerFailure, time.Microsecond, "bad input")
		}
		rec.Flush()
		rec2.Flush()
		time.Sleep(time.Millisecond)
	}
	close(done)
	wg.Wait()
	rec.Close()
	rec2.Close()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	_, err = s.Compact()
	require.NoError(t, err)
	fresh, err := Open(root)
	require.NoError(t, err)
	for _, m := range keys {
		a, err := fresh.Load("r", m)
		require.NoError(t, err)
		assert.Equal(t, int64(rounds), a.SuccessCount, "%s", m)
		assert.Equal(t, int64(rounds), a.CallerFailureCount, "%s", m)
	}
	r, err := fresh.Role("r")
	require.NoError(t, err)
	assert.Equal(t, int64(2*rounds*len(keys)), r.UsageCount)
}

// storeWithMethod opens a new store holding role r and its method m.
func storeWithMethod(t *testing.T) *Store {
	t.Helper()
	s, err := Open(t.TempDir())
	require.NoError(t, err)
	_, err = s.PutRole(Contract{Role: "r", Purpose: "p"}, t0)
	require.NoError(t, err)
	newArtifact(t, s, "r", "m", "package artifact")
	return s
}
