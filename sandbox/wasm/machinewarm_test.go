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

	"github.com/artifactforge/forge/sandbox"
)

// TestMachineWarm (issue 25): the warm-up is the machine's, per Go build cache: once it passed, a
// new store on the same machine needs none, and another build cache does; while a process warms
// (holds a lock) no other is needed.
func TestMachineWarm(t *testing.T) {
	tc, err := shared.builder.toolchain()
	if err != nil {
		t.Skip(err)
	}
	dir := filepath.Join(t.TempDir(), "warm")
	machineWarmDir = func() (string, error) { return dir, nil }
	defer func() { machineWarmDir = testMachineWarmDir }()
	require.True(t, MachineNeedsWarm(), "no marker yet")
	if runtime.GOOS != "windows" && runtime.GOOS != "plan9" {
		release, _ := lockMachineWarm(context.Background(), tc, false)
		assert.False(t, MachineNeedsWarm(), "a warm-up of the call module is running")
		release()
		markMachineWarm(tc, false)
		release, _ = lockMachineWarm(context.Background(), tc, true)
		assert.False(t, MachineNeedsWarm(), "a warm-up of the test module is running")
		release()
		require.NoError(t, os.Remove(machineWarmPath(tc, false)))
		require.True(t, MachineNeedsWarm(), "none running")
	}
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

// warmDirOfTest points the machine's warm-up markers and locks at a directory of t's own until t
// ends, and returns the lock paths the warm-up starts waiting for (lockWaiting).
func warmDirOfTest(t *testing.T) <-chan string {
	dir := filepath.Join(t.TempDir(), "warm")
	machineWarmDir = func() (string, error) { return dir, nil }
	waiting := make(chan string, 4)
	lockWaiting = func(path string) { waiting <- path }
	t.Cleanup(func() { machineWarmDir, lockWaiting = testMachineWarmDir, nil })
	return waiting
}

// TestMachineWarmWaits (issue 25): a warm-up of the machine while another process holds its lock
// (a detached warm-up an earlier command started) waits for it, then builds nothing if that one
// left its marker; a store's first build waits the same way.
func TestMachineWarmWaits(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("no flock")
	}
	tc, err := shared.builder.toolchain()
	if err != nil {
		t.Skip(err)
	}
	waiting := warmDirOfTest(t)
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
	releaseCall, _ := lockMachineWarm(ctx, tc, false)
	releaseTest, _ := lockMachineWarm(ctx, tc, true)
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

	// A store's first build waits for the lock too; if the other process left the marker
	// meanwhile, it builds nothing (the cache was warmed just now)...
	releaseCall, _ = lockMachineWarm(ctx, tc, false)
	sb, err := New(Options{CacheDir: t.TempDir()})
	require.NoError(t, err)
	defer sb.Close()
	go func() { done <- sb.builder.warmUp(ctx, tc, false) }()
	assert.Equal(t, machineWarmPath(tc, false)+".lock", await())
	releaseCall()
	require.NoError(t, <-done)
	assert.Equal(t, before, warmBuilds.Load(), "warmed by the other process while this one waited")
	_, err = os.Lstat(sb.builder.warmMarker(tc, false))
	assert.NoError(t, err, "the store's marker")

	// ... and if not (the other process failed, or an old marker: the cache may have been
	// emptied since), it builds the trivial module itself, not inside an artifact's bound.
	require.NoError(t, os.Remove(machineWarmPath(tc, true)))
	releaseTest, _ = lockMachineWarm(ctx, tc, true)
	go func() { done <- sb.builder.warmUp(ctx, tc, true) }()
	assert.Equal(t, machineWarmPath(tc, true)+".lock", await())
	releaseTest()
	require.NoError(t, <-done)
	assert.Equal(t, before+1, warmBuilds.Load())
	assert.True(t, machineWarm(tc, true), "marked again")

}

// TestMachineMarkerSparesWarmBuild (issue 25): a process on a machine whose marker says the build
// cache is warm skips its own trivial warm-up build (a go command and a link before its first
// build); if its first build then runs out of time, the cache may have been emptied since the
// marker: it warms for real and builds once more before the code is blamed.
func TestMachineMarkerSparesWarmBuild(t *testing.T) {
	if _, err := shared.builder.toolchain(); err != nil {
		t.Skip(err)
	}
	dir := filepath.Join(t.TempDir(), "warm")
	machineWarmDir = func() (string, error) { return dir, nil }
	defer func() { machineWarmDir = testMachineWarmDir }()
	ctx := context.Background()
	require.NoError(t, WarmMachine(ctx))

	before := warmBuilds.Load()
	sb, err := New(Options{CacheDir: t.TempDir()})
	require.NoError(t, err)
	defer sb.Close()
	p, err := sb.Compile(ctx, sandbox.Source{Code: "package artifact\n\nfunc Twice(n int) int { return 2 * n }\n"})
	require.NoError(t, err)
	out, err := sb.Run(ctx, p, sandbox.Input{Args: []byte(`[21]`)})
	require.NoError(t, err)
	assert.Equal(t, "42", string(out.Value))
	assert.Equal(t, before, warmBuilds.Load(), "the machine's marker spared the warm-up build")
	assert.False(t, sb.builder.unproven(false), "a build passed: the cache is proven warm")

	// A build out of time (buildTimeout shortened stands in for a slow cold build) on the
	// marker's word: a real warm-up, then the build again, which is the code's verdict.
	other, err := New(Options{CacheDir: t.TempDir()})
	require.NoError(t, err)
	defer other.Close()
	saved := buildTimeout
	buildTimeout = time.Nanosecond
	defer func() { buildTimeout = saved }()
	_, err = other.Compile(ctx, sandbox.Source{Code: "package artifact\n\nfunc Thrice(n int) int { return 3 * n }\n"})
	e := sandbox.AsError(err)
	require.NotNil(t, e)
	assert.Equal(t, sandbox.KindDeadline, e.Kind, "%v", err)
	assert.Equal(t, before+1, warmBuilds.Load(), "warmed for real before the code was blamed")
}
