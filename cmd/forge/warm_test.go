package main

import (
	"context"
	"log/slog"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/sandbox"
)

// warmingSandbox is a fake backend that needs a warm-up until it had one. Each of its steps lasts
// until the progress wrapper has shown it (out has grown), as a slow one would.
type warmingSandbox struct {
	fakeSandbox
	out   *syncBuffer
	needs bool
	warms int
}

// shown waits until out grew (a hang bound, not a speed bound); with no out, it does not wait.
func (s *warmingSandbox) shown() {
	if s.out == nil {
		return
	}
	n := len(s.out.String())
	for deadline := time.Now().Add(time.Minute); len(s.out.String()) == n && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
}

func (s *warmingSandbox) Compile(ctx context.Context, src sandbox.Source) (sandbox.Program, error) {
	s.shown()
	return s.fakeSandbox.Compile(ctx, src)
}

func (s *warmingSandbox) Test(ctx context.Context, src sandbox.Source, code string, in sandbox.Input) ([]sandbox.TestResult, error) {
	s.shown()
	return s.fakeSandbox.Test(ctx, src, code, in)
}

func (s *warmingSandbox) NeedsWarm() bool { return s.needs }
func (s *warmingSandbox) Warm(context.Context) error {
	s.shown()
	s.warms++
	s.needs = false
	return nil
}

// TestProgressShowsTheWarmUp (issue 25): through the progress wrapper a sandbox's warm-up is still
// reachable (sandbox.Warmer) and shows as a step that says what it does and how long it took; the
// first compile and acceptance tests on a machine not warmed yet say why they take a while.
func TestProgressShowsTheWarmUp(t *testing.T) {
	var out syncBuffer
	fake := &warmingSandbox{out: &out, needs: true}
	sb := withProgress(fake, "wasm", &slowSteps{w: &out, after: 0})
	w, ok := sb.(sandbox.Warmer)
	require.True(t, ok, "the warm-up is reachable through the wrapper")
	_, _ = sb.Compile(context.Background(), sandbox.Source{Func: "Upper"})
	_, _ = sb.(sandbox.Tester).Test(context.Background(), sandbox.Source{Func: "Upper"}, "", sandbox.Input{})
	// The compile and the tests, each when it starts and when it is done.
	assert.Equal(t, 4, strings.Count(out.String(), "the first on this machine: the Go toolchain compiles its standard library for wasm once"), out.String())

	require.True(t, w.NeedsWarm())
	require.NoError(t, w.Warm(context.Background()))
	assert.Equal(t, 1, fake.warms)
	assert.False(t, w.NeedsWarm())
	assert.Contains(t, out.String(), "forge: preparing the wasm sandbox (the Go toolchain compiles its standard library for wasm once: seconds for calls, half a minute for tests) ...\n")
	assert.Contains(t, out.String(), "forge: preparing the wasm sandbox (the Go toolchain compiles its standard library for wasm once: seconds for calls, half a minute for tests): done in ")

	before := len(out.String())
	_, _ = sb.Compile(context.Background(), sandbox.Source{Func: "Upper"})
	assert.Contains(t, out.String()[before:], "a first build takes a while; later ones are cached", "once warm, the usual words")

	plain := withProgress(&fakeSandbox{}, "yaegi", &slowSteps{w: &out, after: time.Hour}).(sandbox.Warmer)
	assert.False(t, plain.NeedsWarm(), "a backend with nothing to warm")
	assert.NoError(t, plain.Warm(context.Background()))
}

// TestServeWarmsAtStart (issue 25): serve's background warm-up logs when it starts and how long it
// took, for a backend that needs one; nothing for one that does not.
func TestServeWarmsAtStart(t *testing.T) {
	for _, needs := range []bool{true, false} {
		var out syncBuffer
		fake := &warmingSandbox{needs: needs}
		f, err := forge.Open(forge.Options{Store: t.TempDir(), DefaultSandbox: "yaegi",
			Sandboxes: func(string) (sandbox.Sandbox, error) { return fake, nil }})
		require.NoError(t, err)
		warmAtStart(context.Background(), f, slog.New(slog.NewJSONHandler(&out, nil)))
		require.NoError(t, f.Close())
		if !needs {
			assert.Empty(t, out.String())
			continue
		}
		assert.Equal(t, 1, fake.warms)
		assert.Contains(t, out.String(), `"msg":"preparing the sandbox in the background: the Go toolchain compiles its standard library for wasm once: seconds for calls, half a minute for tests"`)
		assert.Contains(t, out.String(), `"msg":"sandbox ready","sandbox":"yaegi","took":"`)
	}
}

// TestWarmsInBackground: help and shell completion (run at every Tab) never start the background
// warm-up, nor does the warm-up process itself; every other command may.
func TestWarmsInBackground(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{nil, true},
		{[]string{"--version"}, true},
		{[]string{"role", "add", "-f", "c.json"}, true},
		{[]string{"call", "ver", "add", "a=2"}, true},
		{[]string{"help"}, false},
		{[]string{"call", "--help"}, false},
		{[]string{"-h"}, false},
		{[]string{"completion", "bash"}, false},
		{[]string{"__complete", "call", ""}, false},
		{[]string{warmChildArg}, false},
		{[]string{"call", "x", "y", "--", "--help"}, true},
	} {
		assert.Equal(t, tc.want, warmsInBackground(tc.args), "%q", tc.args)
	}
}

// TestBinWarmsInBackground (issue 25): on a machine whose wasm toolchain never warmed (no marker
// in this HOME's cache directory), a first forge command starts the warm-up in a process that
// outlives it and leaves the machine's markers. The build cache is the test's own, already warm,
// so the warm-up costs two trivial builds.
func TestBinWarmsInBackground(t *testing.T) {
	if testing.Short() {
		t.Skip("builds wasm modules")
	}
	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	require.NoError(t, err)
	home := t.TempDir()
	env := []string{"HOME=" + home, "XDG_CACHE_HOME=" + filepath.Join(home, "cache"), "GOCACHE=" + strings.TrimSpace(string(gocache)),
		"FORGE_SANDBOX=", "FORGE_WARM="}
	r := bin(t, nil, env, "--version")
	require.Equal(t, 0, r.code, r.stderr)
	dir := filepath.Join(home, "cache", "forge", "wasm-warm")
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(50 * time.Millisecond) { // a hang bound
		call, _ := filepath.Glob(filepath.Join(dir, "go*-call"))
		test, _ := filepath.Glob(filepath.Join(dir, "go*-test"))
		if len(call) == 1 && len(test) == 1 {
			break
		}
		require.True(t, time.Now().Before(deadline), "no warm-up markers in %s", dir)
	}
}
