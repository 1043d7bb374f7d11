package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/forge"
)

// liveStore is a store with role text and text.upper generated once and called three more times.
func liveStore(t *testing.T) (store string, s func(...string) []string) {
	t.Setenv("FORGE_PROVIDER", "")
	t.Setenv("FORGE_SANDBOX", "yaegi")
	store = t.TempDir()
	cas := filepath.Join(t.TempDir(), "cassette.jsonl")
	require.NoError(t, os.WriteFile(cas, []byte(upperCassette), 0o644))
	s = func(args ...string) []string { return append([]string{"--store", store}, args...) }
	code, _, errOut := runCLI(t, s("role", "add", "--role", "text", "--purpose", "string utilities")...)
	require.Equal(t, 0, code, errOut)
	code, _, errOut = runCLI(t, s("call", "text", "upper", "s=hi", "--provider=replay:"+cas)...)
	require.Equal(t, 0, code, errOut)
	for i := 0; i < 3; i++ {
		code, _, errOut = runCLI(t, s("call", "text", "upper", "s=again")...)
		require.Equal(t, 0, code, errOut)
	}
	return store, s
}

func TestStatsCommand(t *testing.T) {
	_, s := liveStore(t)
	code, out, errOut := runCLI(t, s("--json", "stats")...)
	require.Equal(t, 0, code, errOut)
	var st forge.Stats
	require.NoError(t, json.Unmarshal([]byte(out), &st), out)
	assert.Equal(t, int64(4), st.Overall.Calls)
	assert.Equal(t, int64(3), st.Overall.Persisted)
	assert.Equal(t, int64(1), st.Overall.ProviderCalls)
	assert.Equal(t, int64(3), st.Overall.ProviderCallsSaved)
	code, out, _ = runCLI(t, s("stats", "--since", "1h")...)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "reuse hit rate 75.0%")
	assert.Contains(t, out, "model calls per 1,000 calls 250.0")
	code, _, _ = runCLI(t, s("stats", "--since", "soon")...)
	assert.Equal(t, 2, code)
}

// fakeEditor is an $EDITOR that replaces the file with the content of src.
func fakeEditor(t *testing.T, code string) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "new.go")
	require.NoError(t, os.WriteFile(src, []byte(code), 0o644))
	ed := filepath.Join(dir, "editor.sh")
	require.NoError(t, os.WriteFile(ed, []byte("#!/bin/sh\ncp '"+src+"' \"$1\"\n"), 0o755))
	return ed
}

func TestEditCommand(t *testing.T) {
	_, s := liveStore(t)
	t.Setenv("EDITOR", fakeEditor(t, "package artifact\n\nfunc Upper(s string) string { return s + s }\n"))
	// The edit changes the answer the calls above got: refused until the operator accepts it.
	code, _, errOut := runCLI(t, s("edit", "text", "upper")...)
	require.Equal(t, 1, code)
	assert.Contains(t, errOut, `args {"s":"again"}: was "AGAIN", now "againagain"`)
	code, out, errOut := runCLI(t, s("edit", "text", "upper", "--accept-changes")...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "generation 2 stored (operator:edit")
	code, out, _ = runCLI(t, s("call", "text", "upper", "s=ab")...)
	require.Equal(t, 0, code)
	assert.Equal(t, "\"abab\"\n", out)

	t.Setenv("EDITOR", fakeEditor(t, "package artifact\n\nfunc Upper(s string) string { return s[\n"))
	code, _, errOut = runCLI(t, s("edit", "text", "upper")...)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "edit refused, nothing stored")
	assert.Contains(t, errOut, "forge edit` again")
	code, out, _ = runCLI(t, s("--json", "show", "text", "upper")...)
	require.Equal(t, 0, code)
	assert.Contains(t, out, `"generation": 2`)

	t.Setenv("EDITOR", "true") // saves nothing new
	code, out, _ = runCLI(t, s("edit", "text", "upper")...)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "unchanged")
}

// `forge watch` sees calls and a bless made by other commands (other forge instances).
func TestWatchCommand(t *testing.T) {
	store, s := liveStore(t)
	var out, errb syncBuffer
	a := &app{stdout: &out, stderr: &errb, jsonOut: true}
	f, err := forge.Open(forge.Options{Store: store, NoEvents: true})
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, f.Watch())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	live := make(chan struct{})
	go func() { done <- watchLoop(ctx, a, f, forge.Filter{Role: "text"}, func() { close(live) }) }()
	<-live // the tail starts at the end of the log

	code, _, errOut := runCLI(t, s("call", "text", "upper", "s=watched")...)
	require.Equal(t, 0, code, errOut)
	code, _, errOut = runCLI(t, s("bless", "text", "upper")...)
	require.Equal(t, 0, code, errOut)
	deadline := time.Now().Add(10 * time.Second) // a hang bound
	for !(strings.Contains(out.String(), `"kind":"call"`) && strings.Contains(out.String(), `"lifecycle":"blessed"`)) {
		require.True(t, time.Now().Before(deadline), "watch printed %q", out.String())
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	require.NoError(t, <-done)
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var e forge.LiveEvent
		require.NoError(t, json.Unmarshal([]byte(l), &e), "one JSON event per line: %q", l)
	}
	assert.Contains(t, formatLive(&forge.LiveEvent{Kind: forge.LiveArtifact, Artifact: &forge.ArtifactChange{Role: "text", Method: "upper",
		PreviousLifecycle: "candidate", PreviousGeneration: 1, Lifecycle: "blessed", Generation: 1}}), "text.upper candidate gen 1 -> blessed gen 1")
	assert.Contains(t, formatLive(&forge.LiveEvent{Kind: forge.LiveCall, Call: &forge.Event{Kind: forge.EventAggregate, Role: "text", Method: "upper",
		ProgramSource: forge.SourcePersisted, ArtifactGen: 1, Count: 1200, DurationP50NS: 6000, DurationP99NS: 21000, DurationMaxNS: 90000}}),
		"text.upper ok persisted gen 1 x1200")
	assert.Contains(t, formatLive(&forge.LiveEvent{Kind: forge.LiveCall, Call: &forge.Event{Kind: forge.EventAggregate, Role: forge.UnknownLabel, Method: forge.UnknownLabel,
		FailureClass: "caller", FailureRule: "args", Count: 300}}), "_unknown._unknown FAILED caller/args  gen 0 x300", "an aggregate of caller errors is no ok")
}
