//go:build unix

package wasm

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLockFileIsPrivate: the machine's warm-up lock is a file no other user may open (flock needs
// only a read-only descriptor: one they could open, they could hold forever), and one an older
// forge left readable by all is made private.
func TestLockFileIsPrivate(t *testing.T) {
	dir := t.TempDir()
	fresh := filepath.Join(dir, "fresh.lock")
	release, _ := lockFile(context.Background(), fresh, 0)
	release()
	fi, err := os.Stat(fresh)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	old := filepath.Join(dir, "old.lock")
	require.NoError(t, os.WriteFile(old, nil, 0o644))
	require.NoError(t, os.Chmod(old, 0o644))
	release, _ = lockFile(context.Background(), old, 0)
	release()
	fi, err = os.Stat(old)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "an older forge's lock file")

	warm := filepath.Join(dir, "forge", "wasm-warm")
	machineWarmDir = func() (string, error) { return warm, nil }
	defer func() { machineWarmDir = testMachineWarmDir }()
	release, _ = lockMachineWarm(context.Background(), toolchain{version: "go1.0"}, false)
	release()
	fi, err = os.Stat(warm)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), "the machine's warm-up directory")
}
