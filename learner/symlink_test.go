package learner

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKnowledgeThroughSymlinkIsRefused: a linked knowledge/, or a lesson file or lock planted as
// a link, does not make the learner write or lock outside the store.
func TestKnowledgeThroughSymlinkIsRefused(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	require.NoError(t, os.Symlink(outside, filepath.Join(root, Dir)))
	_, err := Open(root, Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), filepath.Join(root, Dir))

	for _, planted := range []string{"calc.yaml", "calc.lock"} {
		root := t.TempDir()
		dir := filepath.Join(root, Dir)
		require.NoError(t, os.MkdirAll(dir, 0o755))
		target := filepath.Join(t.TempDir(), "victim")
		require.NoError(t, os.Symlink(target, filepath.Join(dir, planted)))
		d := DirDocs(dir, nil)
		err := d.Modify("calc.yaml", func(old []byte) ([]byte, error) { return []byte("lessons: []\n"), nil })
		require.Error(t, err, planted)
		assert.Contains(t, err.Error(), filepath.Join(dir, planted))
		assert.NoFileExists(t, target, planted)
	}
}
