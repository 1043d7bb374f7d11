//go:build unix

package replay

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/internal/storepath"
)

// TestRedteam4CassetteEveryUserMayWrite: a cassette's answers are the code forge verifies and
// runs; one every user may write was read as any other, so any local user wrote that code. It is
// refused as a store file would be.
func TestRedteam4CassetteEveryUserMayWrite(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c.jsonl")
	require.NoError(t, os.WriteFile(p, nil, 0o644))
	_, err := Open(p)
	require.NoError(t, err)
	require.NoError(t, os.Chmod(p, 0o666))
	_, err = Open(p)
	require.Error(t, err)
	assert.True(t, errors.Is(err, storepath.ErrOpenToAll), "%v", err)
	assert.Contains(t, err.Error(), "chmod o-w "+p)
}
