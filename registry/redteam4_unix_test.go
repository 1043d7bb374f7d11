//go:build unix

package registry

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRedteam4DoctorListsTheDirectoryBehindALink: a store file that is a link into a directory
// every user may write is refused on read (storepath.OpenRegular); doctor skipped links, so it
// said nothing of it. It lists that directory, which is what to chmod.
func TestRedteam4DoctorListsTheDirectoryBehindALink(t *testing.T) {
	base := t.TempDir()
	s, err := Open(filepath.Join(base, "store"))
	require.NoError(t, err)
	shared := filepath.Join(base, "shared")
	require.NoError(t, os.Mkdir(shared, 0o777))
	require.NoError(t, os.Chmod(shared, 0o777))
	target := filepath.Join(shared, "go.yaml")
	require.NoError(t, os.WriteFile(target, []byte("lessons"), 0o644))
	kn := filepath.Join(s.root, "knowledge")
	require.NoError(t, os.MkdirAll(kn, 0o755))
	require.NoError(t, os.Symlink(target, filepath.Join(kn, "go.yaml")))
	rep, err := s.Doctor()
	require.NoError(t, err)
	assert.Equal(t, []string{shared}, rep.OpenToAll)

	require.NoError(t, os.Chmod(shared, 0o755))
	rep, err = s.Doctor()
	require.NoError(t, err)
	assert.Empty(t, rep.OpenToAll)
}

// TestRedteam4StoreUnderADirectoryEveryUserMayRename: a store whose root sits (at any depth) in a
// directory every user may write and that is not sticky opened: any user could rename the
// store's root (or a directory on its way) aside and put a tree of theirs in its place, whose
// code forge would run. It is refused, with the chmod to run; a sticky one (as /tmp) lets only
// an entry's owner rename it.
func TestRedteam4StoreUnderADirectoryEveryUserMayRename(t *testing.T) {
	open := filepath.Join(t.TempDir(), "open")
	require.NoError(t, os.Mkdir(open, 0o755))
	root := filepath.Join(open, "team", "store")
	require.NoError(t, os.MkdirAll(root, 0o755))
	require.NoError(t, os.Chmod(open, 0o777))
	_, err := Open(root)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "chmod o-w "+open)

	require.NoError(t, os.Chmod(open, 0o777|os.ModeSticky))
	_, err = Open(root)
	require.NoError(t, err, "a sticky directory")
	require.NoError(t, os.Chmod(open, 0o755))
	_, err = Open(root)
	require.NoError(t, err)
}
