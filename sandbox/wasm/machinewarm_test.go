package wasm

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMachineWarm (issue 25): the warm-up is the machine's, per Go build cache: once it passed, a
// new store on the same machine needs none (its first build only checks the cache), and another
// build cache does.
func TestMachineWarm(t *testing.T) {
	tc, err := shared.builder.toolchain()
	if err != nil {
		t.Skip(err)
	}
	dir := filepath.Join(t.TempDir(), "warm")
	machineWarmDir = func() (string, error) { return dir, nil }
	defer func() { machineWarmDir = testMachineWarmDir }()
	require.True(t, MachineNeedsWarm(), "no marker yet")
	require.NoError(t, WarmMachine(context.Background()))
	assert.False(t, MachineNeedsWarm(), "both kinds warmed")
	assert.True(t, machineWarm(tc, false) && machineWarm(tc, true))

	sb, err := New(Options{CacheDir: t.TempDir()})
	require.NoError(t, err)
	defer sb.Close()
	assert.False(t, sb.NeedsWarm(), "a new store on a warm machine")

	t.Setenv("GOCACHE", t.TempDir())
	assert.True(t, MachineNeedsWarm(), "another build cache")
	other, err := New(Options{CacheDir: t.TempDir()})
	require.NoError(t, err)
	defer other.Close()
	assert.True(t, other.NeedsWarm(), "a new store on another build cache")
}

// TestMachineWarmWaits (issue 25): a warm-up of the machine while another process holds its lock
// (a detached warm-up an earlier command started) waits for it, then builds nothing if that one
// left its marker; a store's first build waits the same way, then builds (from the cache).
func TestMachineWarmWaits(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("no flock")
	}
	tc, err := shared.builder.toolchain()
	if err != nil {
		t.Skip(err)
	}
	dir := filepath.Join(t.TempDir(), "warm")
	machineWarmDir = func() (string, error) { return dir, nil }
	waiting := make(chan string, 4)
	lockWaiting = func(path string) { waiting <- path }
	defer func() { machineWarmDir, lockWaiting = testMachineWarmDir, nil }()
	await := func() string {
		select {
		case p := <-waiting:
			return p
		case <-time.After(time.Minute): // a hang bound, not a speed bound
			t.Fatal("the warm-up did not wait for the lock")
			return ""
		}
	}

	// The other process holds both kinds' locks and warms.
	ctx := context.Background()
	releaseCall, releaseTest := lockMachineWarm(ctx, tc, false), lockMachineWarm(ctx, tc, true)
	done := make(chan error, 1)
	before := warmBuilds.Load()
	go func() { done <- WarmMachine(ctx) }()
	assert.Equal(t, machineWarmPath(tc, false)+".lock", await())
	markMachineWarm(tc, false)
	releaseCall()
	assert.Equal(t, machineWarmPath(tc, true)+".lock", await())
	markMachineWarm(tc, true)
	releaseTest()
	require.NoError(t, <-done)
	assert.Equal(t, before, warmBuilds.Load(), "what the other process did is not done again")

	// A store's first build waits for the lock too, then builds the trivial module itself (an
	// emptied build cache must not be the artifact's to pay for).
	releaseCall = lockMachineWarm(ctx, tc, false)
	sb, err := New(Options{CacheDir: t.TempDir()})
	require.NoError(t, err)
	defer sb.Close()
	go func() { done <- sb.builder.warmUp(ctx, tc, false) }()
	assert.Equal(t, machineWarmPath(tc, false)+".lock", await())
	releaseCall()
	require.NoError(t, <-done)
	assert.Equal(t, before+1, warmBuilds.Load())
	_, err = os.Lstat(sb.builder.warmMarker(tc, false))
	assert.NoError(t, err, "the store's marker")
}
