package forge

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEventLogThroughSymlinkIsRefused: a linked events/ or a planted events/forge.jsonl link does
// not make forge append its event log outside the store.
func TestEventLogThroughSymlinkIsRefused(t *testing.T) {
	store := t.TempDir()
	outside := t.TempDir()
	require.NoError(t, os.Symlink(outside, filepath.Join(store, "events")))
	_, _, err := newEventLog(filepath.Join(store, "events"), eventLogMaxBytes, 4)
	require.Error(t, err)
	assert.Contains(t, err.Error(), filepath.Join(store, "events"))

	store = t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(store, "events"), 0o755))
	target := filepath.Join(t.TempDir(), "victim.jsonl")
	require.NoError(t, os.Symlink(target, filepath.Join(store, "events", "forge.jsonl")))
	_, _, err = newEventLog(filepath.Join(store, "events"), eventLogMaxBytes, 4)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "symbolic link")
	assert.NoFileExists(t, target)
}
