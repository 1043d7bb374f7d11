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
