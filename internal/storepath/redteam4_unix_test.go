//go:build unix

package storepath

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRedteam4LinkIntoADirectoryEveryUserMayWrite: a store file that is a link (knowledge shared
// from elsewhere, say) was checked against the directory of the link, not of the file it reads:
// a file in a directory every user may write (where any of them may replace it) was read.
func TestRedteam4LinkIntoADirectoryEveryUserMayWrite(t *testing.T) {
	base := t.TempDir()
	shared := filepath.Join(base, "shared")
	require.NoError(t, os.Mkdir(shared, 0o755))
	target := filepath.Join(shared, "go.yaml")
	require.NoError(t, os.WriteFile(target, []byte("lessons"), 0o644))
	store := filepath.Join(base, "store", "knowledge")
	require.NoError(t, os.MkdirAll(store, 0o755))
	link := filepath.Join(store, "go.yaml")
	require.NoError(t, os.Symlink(target, link))
	b, err := ReadRegular(link, "read knowledge from")
	require.NoError(t, err, "a link into a directory only its owner writes")
	assert.Equal(t, "lessons", string(b))

	require.NoError(t, os.Chmod(shared, 0o777))
	_, err = ReadRegular(link, "read knowledge from")
	require.ErrorIs(t, err, ErrOpenToAll)
	assert.Contains(t, err.Error(), "chmod o-w "+shared)
	assert.Contains(t, err.Error(), "the directory "+shared+" of "+link)

	// A link to a link: the last file's directory decides.
	hop := filepath.Join(base, "hop")
	require.NoError(t, os.Mkdir(hop, 0o755))
	require.NoError(t, os.Symlink(target, filepath.Join(hop, "go.yaml")))
	require.NoError(t, os.Remove(link))
	require.NoError(t, os.Symlink(filepath.Join(hop, "go.yaml"), link))
	_, err = ReadRegular(link, "read knowledge from")
	require.ErrorIs(t, err, ErrOpenToAll)
}
