//go:build unix

package storepath

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOpenToAllCheckIsTheOpensVerdict: the check a listing makes without opening a file gives
// the error OpenRegular gives when it opens it, for a file or directory every user may write,
// through a link too, and none where the open succeeds.
func TestOpenToAllCheckIsTheOpensVerdict(t *testing.T) {
	base := t.TempDir()
	mk := func(dir string, dirMode, fileMode os.FileMode) string {
		d := filepath.Join(base, dir)
		require.NoError(t, os.MkdirAll(d, 0o755))
		p := filepath.Join(d, "a.json")
		require.NoError(t, os.WriteFile(p, []byte("{}"), 0o644))
		require.NoError(t, os.Chmod(p, fileMode))
		require.NoError(t, os.Chmod(d, dirMode))
		return p
	}
	link := func(dir, target string) string {
		d := filepath.Join(base, dir)
		require.NoError(t, os.MkdirAll(d, 0o755))
		p := filepath.Join(d, "a.json")
		require.NoError(t, os.Symlink(target, p))
		return p
	}
	sound := mk("sound", 0o755, 0o644)
	group := mk("group", 0o775, 0o664)
	file := mk("file", 0o755, 0o666)
	dir := mk("dir", 0o777, 0o644)
	for _, tc := range []struct {
		name, path string
		refused    bool
	}{
		{"sound", sound, false},
		{"a group may write", group, false},
		{"the file", file, true},
		{"its directory", dir, true},
		{"a link to a sound file", link("l1", sound), false},
		{"a link into a directory every user may write", link("l2", dir), true},
		{"a link to a file every user may write", link("l3", file), true},
		{"missing: the open's to report", filepath.Join(base, "none"), false},
	} {
		var c OpenToAllCheck
		got := c.Check(tc.path, "list")
		_, open := ReadRegular(tc.path, "list")
		if !tc.refused {
			assert.NoError(t, got, tc.name)
			continue
		}
		require.ErrorIs(t, got, ErrOpenToAll, tc.name)
		require.Error(t, open, tc.name)
		assert.Equal(t, open.Error(), got.Error(), tc.name)
		assert.Equal(t, got, c.Check(tc.path, "list"), "%s: again, from what it remembers", tc.name)
	}
}
