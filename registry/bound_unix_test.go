//go:build unix

package registry

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// notAFile puts a named pipe where a store file was: opened for reading, it would block until a
// writer came, and read until that writer closed.
func notAFile(t *testing.T) func(p string) {
	return func(p string) {
		require.NoError(t, os.Remove(p))
		require.NoError(t, syscall.Mkfifo(p, 0o644))
	}
}

// TestWorldWritableStoreIsRefused: whoever writes tools/, roles/ or knowledge/ decides what forge
// runs, so a store directory any user may write is refused when the store opens, with the path
// and the chmod to run; nothing in it is touched.
func TestWorldWritableStoreIsRefused(t *testing.T) {
	for _, dir := range []string{"", "tools", "roles", "knowledge", "sums"} {
		t.Run("dir="+dir, func(t *testing.T) {
			root := t.TempDir()
			s, err := Open(root)
			require.NoError(t, err)
			newArtifact(t, s, "r", "m", "package artifact\n// one")
			p := filepath.Join(root, dir)
			require.NoError(t, os.MkdirAll(p, 0o755))
			require.NoError(t, os.Chmod(p, 0o777))
			_, err = Open(root)
			require.Error(t, err)
			assert.Contains(t, err.Error(), p)
			assert.Contains(t, err.Error(), "chmod o-w "+p)
			assert.FileExists(t, s.ArtifactPath("r", "m"), "nothing is lost")

			require.NoError(t, os.Chmod(p, 0o775)) // a group the operator chose may write it
			s, err = Open(root)
			require.NoError(t, err)
			_, err = s.Load("r", "m")
			require.NoError(t, err)
		})
	}
}

// TestArtifactEveryUserMayWriteIsRefused: within a store whose own directories are fine, an
// artifact file (or its role's directory) that any user may write is refused on load with the
// chmod to run, and is neither quarantined nor changed.
func TestArtifactEveryUserMayWriteIsRefused(t *testing.T) {
	root := t.TempDir()
	s, err := Open(root)
	require.NoError(t, err)
	newArtifact(t, s, "r", "m", "package artifact\n// one")
	p := s.ArtifactPath("r", "m")
	for _, target := range []string{p, filepath.Dir(p)} {
		fi, err := os.Stat(target)
		require.NoError(t, err)
		require.NoError(t, os.Chmod(target, fi.Mode().Perm()|0o002))
		s, err = Open(root)
		require.NoError(t, err)
		_, err = s.Load("r", "m")
		require.Error(t, err, target)
		assert.Contains(t, err.Error(), "chmod o-w "+target)
		assert.NotErrorIs(t, err, ErrCorrupt, "not damage: nothing is set aside")
		assert.FileExists(t, p)
		require.NoError(t, os.Chmod(target, fi.Mode().Perm()))
		_, err = s.Load("r", "m")
		require.NoError(t, err)
	}
}

// TestDoctorListsWhatEveryUserMayWrite: doctor goes on past a file every user may write (it
// used to stop at the first load error) and lists each such file and directory.
func TestDoctorListsWhatEveryUserMayWrite(t *testing.T) {
	root := t.TempDir()
	s, err := Open(root)
	require.NoError(t, err)
	newArtifact(t, s, "r", "m", "package artifact\n// one")
	newArtifact(t, s, "q", "m", "package artifact\n// two")
	art, dir := s.ArtifactPath("r", "m"), filepath.Dir(s.ArtifactPath("q", "m"))
	require.NoError(t, os.Chmod(art, 0o666))
	require.NoError(t, os.Chmod(dir, 0o777))
	rep, err := s.Doctor()
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{art, dir}, rep.OpenToAll)
	assert.True(t, rep.Damaged())
	assert.Empty(t, rep.Quarantined, "nothing is moved")
	assert.FileExists(t, art)

	// Listing goes on too (it failed whole): the refused file is listed with why.
	sums, err := s.Summaries()
	require.NoError(t, err)
	require.Len(t, sums, 2)
	for _, sm := range sums {
		if sm.Role == "r" {
			require.Error(t, sm.Err, "%+v", sm)
			assert.Contains(t, sm.Err.Error(), "chmod o-w "+art)
		}
	}
}
