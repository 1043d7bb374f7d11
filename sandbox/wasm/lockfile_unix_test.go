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
	release, _ = lockMachineWarm(context.Background(), toolchain{Version: "go1.0"}, false)
	release()
	fi, err = os.Stat(warm)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), "the machine's warm-up directory")
}

// TestStuckWarmLockIsNamed: a call whose deadline ends while another process holds the machine's
// warm-up lock (a stuck warm-up) does not wait for it: it fails with the lock's path and what to
// do, not a bare deadline.
func TestStuckWarmLockIsNamed(t *testing.T) {
	tc, err := shared.builder.toolchain()
	if err != nil {
		t.Skip(err)
	}
	waiting := warmDirOfTest(t)
	release, _ := lockMachineWarm(context.Background(), tc, false) // the stuck process
	sb, err := New(Options{CacheDir: t.TempDir()})
	require.NoError(t, err)
	defer sb.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sb.builder.warmUp(ctx, tc, false) }()
	var lock string
	select {
	case lock = <-waiting:
	case err := <-done:
		t.Fatalf("the warm-up did not wait for the lock: %v", err)
	}
	cancel() // the call's deadline
	err = <-done
	require.Error(t, err)
	assert.Contains(t, err.Error(), "another process's warm-up")
	assert.Contains(t, err.Error(), lock)
	// The stuck process leaves; the warm-up waiting in the background finds the marker it left.
	markMachineWarm(tc, false)
	release()
}
