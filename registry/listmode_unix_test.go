//go:build unix

package registry

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/internal/storepath"
)

// TestSettledListingRefusesWhatOpeningRefuses: a chmod changes no stamp the summary index
// compares, so once a role's index had settled, a listing (`forge ls`, with no doctor run) showed
// as sound an artifact whose file, or role directory, every user may write, which every open
// refuses. The listing now gives the open's error, and lists it sound again after the chmod o-w.
func TestSettledListingRefusesWhatOpeningRefuses(t *testing.T) {
	root := t.TempDir()
	s, err := Open(root)
	require.NoError(t, err)
	newArtifact(t, s, "r", "m", "package artifact\n// one")
	newArtifact(t, s, "r", "n", "package artifact\n// two")
	art := s.ArtifactPath("r", "m")
	list := func() map[string]error {
		t.Helper()
		other, err := Open(root) // as `forge ls`: a process of its own
		require.NoError(t, err)
		sms, err := other.Summaries()
		require.NoError(t, err)
		got := map[string]error{}
		for _, sm := range sms {
			got[sm.Method] = sm.Err
		}
		return got
	}
	time.Sleep(IndexSettle + 20*time.Millisecond) // not a measure: the directory settles
	for range 2 {                                 // the second reads the settled stamp the first wrote
		got := list()
		require.NoError(t, got["m"])
		require.NoError(t, got["n"])
	}
	for _, target := range []string{art, filepath.Dir(art)} {
		fi, err := os.Stat(target)
		require.NoError(t, err)
		require.NoError(t, os.Chmod(target, fi.Mode().Perm()|0o002))
		_, open := s.readArtifact("r", "m")
		require.ErrorIs(t, open, storepath.ErrOpenToAll)
		for round := range 2 {
			got := list()
			require.ErrorIs(t, got["m"], storepath.ErrOpenToAll, "%s, round %d", target, round)
			assert.Contains(t, got["m"].Error(), "chmod o-w "+target)
			if target == art {
				assert.NoError(t, got["n"], "its neighbour is sound")
			}
		}
		require.NoError(t, os.Chmod(target, fi.Mode().Perm()))
		time.Sleep(IndexSettle + 20*time.Millisecond)
		for round := range 2 {
			got := list()
			assert.NoError(t, got["m"], "%s restored, round %d", target, round)
			assert.NoError(t, got["n"])
		}
	}
}

// BenchmarkSettledListingModeCheck10k is what the mode check adds to the settled listing of
// 10,000 artifacts (100 roles): listing = Open and Summaries with it; modecheck = the check alone
// (an Lstat an artifact, a Stat a role), in the same run.
func BenchmarkSettledListingModeCheck10k(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "s")
	benchStore10kSchema(b, dir, "")
	s, err := Open(dir)
	require.NoError(b, err)
	_, err = s.Summaries() // builds the indexes
	require.NoError(b, err)
	time.Sleep(IndexSettle + 10*time.Millisecond)
	sms, err := s.Summaries() // records the settled directory stamps
	require.NoError(b, err)
	b.Run("listing", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			s, err := Open(dir)
			if err != nil {
				b.Fatal(err)
			}
			if got, err := s.Summaries(); err != nil || len(got) != 10000 {
				b.Fatal(err, len(got))
			}
		}
	})
	b.Run("modecheck", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			for r := 0; r < len(sms); r += 100 { // a role's entries, as roleSummaries checks them
				if !s.noneOpenToAll(sms[r].Role, sms[r:r+100]) {
					b.Fatal("refused")
				}
			}
		}
	})
}
