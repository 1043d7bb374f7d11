package wasm

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWarmMarker (issue 25): a sandbox on a cache that never warmed needs a warm-up; Warm builds
// both trivial modules and leaves a marker, so that another process on the same cache does not
// warm again.
func TestWarmMarker(t *testing.T) {
	// A machine of this test alone: one whose marker another test left would need no warm-up.
	machine := t.TempDir()
	machineWarmDir = func() (string, error) { return machine, nil }
	defer func() { machineWarmDir = testMachineWarmDir }()
	dir := t.TempDir()
	sb, err := New(Options{CacheDir: dir})
	require.NoError(t, err)
	defer sb.Close()
	require.True(t, sb.NeedsWarm(), "a fresh cache needs a warm-up")
	require.NoError(t, sb.Warm(context.Background()))
	assert.False(t, sb.NeedsWarm(), "warm after Warm")
	assert.True(t, sb.builder.warmCall.Load() && sb.builder.warmTest.Load(), "both kinds of module built")

	again, err := New(Options{CacheDir: dir})
	require.NoError(t, err)
	defer again.Close()
	assert.False(t, again.NeedsWarm(), "the next process on this cache finds the marker")

	// Another store on this machine has no marker, but the machine has (TestMachineWarm).
	other, err := New(Options{CacheDir: t.TempDir()})
	require.NoError(t, err)
	defer other.Close()
	assert.False(t, other.NeedsWarm(), "the machine's marker")
	machineWarmDir = func() (string, error) { return t.TempDir(), nil }
	assert.True(t, other.NeedsWarm(), "another cache has no marker")

}
