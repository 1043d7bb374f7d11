package assembler

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCalibratorThroughSymlinkIsRefused: a planted cache/tokens.json.lock link (or a linked
// cache/) does not make Save lock or write outside the store.
func TestCalibratorThroughSymlinkIsRefused(t *testing.T) {
	for _, planted := range []string{"cache", "cache/tokens.json.lock", "cache/tokens.json"} {
		store := t.TempDir()
		target := filepath.Join(t.TempDir(), "victim")
		link := filepath.Join(store, filepath.FromSlash(planted))
		require.NoError(t, os.MkdirAll(filepath.Dir(link), 0o755))
		if planted == "cache" {
			require.NoError(t, os.Mkdir(target, 0o755))
		}
		require.NoError(t, os.Symlink(target, link))
		c, err := OpenCalibrator(filepath.Join(store, "cache", "tokens.json"))
		require.NoError(t, err)
		c.Observe("m", 4000, 1000)
		err = c.Save()
		require.Error(t, err, planted)
		assert.Contains(t, err.Error(), link)
		if planted == "cache" {
			ents, _ := os.ReadDir(target)
			assert.Empty(t, ents)
		} else {
			assert.NoFileExists(t, target)
		}
	}
}
