package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/registry"
)

// operatorEvents reads the store's operator action lines.
func operatorEvents(t *testing.T, store string) []forge.Event {
	t.Helper()
	evs, err := forge.ReadEvents(store)
	require.NoError(t, err)
	var out []forge.Event
	for i := range evs {
		if forge.IsOperatorAction(&evs[i]) {
			out = append(out, evs[i])
		}
	}
	return out
}

// TestCLIEveryOperatorActionIsLogged (issue 22, item 9): role add, bless, quarantine, lift, rollback,
// regen, regen --next-call, edit, prune, quarantine dismiss and restore each write one event line
// with who ("cli:USER"), what, and the generation before and after; forge stats counts them.
func TestCLIEveryOperatorActionIsLogged(t *testing.T) {
	store := t.TempDir()
	yaegiRole(t, store)
	s := func(args ...string) []string { return append([]string{"--store", store}, args...) }
	v2 := answerScript(t, reverseCode+"\n// v2\n")
	code, _, errs := runCLI(t, s(answerScript(t, reverseCode), "call", "str", "reverse", "s=ab")...)
	require.Equal(t, 0, code, errs)
	t.Setenv("EDITOR", fakeEditor(t, reverseCode+"\n// edited\n"))

	steps := [][]string{
		{"bless", "str", "reverse"},                        // gen 1
		{"quarantine", "str", "reverse"},                   // gen 1
		{"quarantine", "lift", "str", "reverse"},           // gen 1
		{v2, "regen", "str", "reverse"},                    // 1 -> 2
		{"rollback", "str", "reverse"},                     // 2 -> 3
		{"regen", "str", "reverse", "--next-call"},         // 3
		{"edit", "str", "reverse"},                         // 3 -> 4
		{"prune", "--older-than", "0s", "--dry-run=false"}, // 4, archived
	}
	for _, st := range steps {
		code, _, errs := runCLI(t, s(st...)...)
		require.Equal(t, 0, code, "%v: %s", st, errs)
	}
	// A damaged artifact file, quarantined by the read that finds it, then dismissed.
	require.NoError(t, os.WriteFile(filepath.Join(store, "tools", "str", "reverse.json"), []byte("{damaged"), 0o644))
	code, _, _ = runCLI(t, s("show", "str", "reverse")...)
	require.Equal(t, 1, code)
	code, out, errs := runCLI(t, s("--json", "quarantine", "ls")...)
	require.Equal(t, 0, code, errs)
	var q []registry.QuarantineReport
	require.NoError(t, json.Unmarshal([]byte(out), &q), out)
	require.Len(t, q, 1)
	code, _, errs = runCLI(t, s("quarantine", "dismiss", q[0].ID)...)
	require.Equal(t, 0, code, errs)
	code, _, _ = runCLI(t, s("quarantine", "restore", "no-such-entry")...)
	require.Equal(t, 1, code)

	want := []struct {
		action        string
		ok            bool
		before, after int
	}{
		{forge.OpDefineRole, true, 0, 0}, {forge.OpBless, true, 1, 1}, {forge.OpQuarantine, true, 1, 1}, {forge.OpLift, true, 1, 1},
		{forge.OpRegenerate, true, 1, 2}, {forge.OpRollback, true, 2, 3}, {forge.OpRegenNextCall, true, 3, 3},
		{forge.OpEdit, true, 3, 4}, {forge.OpArchive, true, 4, 4}, {forge.OpDismiss, true, 0, 0}, {forge.OpRestore, false, 0, 0},
	}
	got := operatorEvents(t, store)
	require.Len(t, got, len(want))
	who := forge.CLIClient()
	require.True(t, strings.HasPrefix(who, "cli"), who)
	for i, w := range want {
		e := got[i]
		assert.Equal(t, w.action, e.Action, "line %d", i)
		assert.Equal(t, w.ok, e.OK, "line %d %s", i, e.Action)
		assert.Equal(t, who, e.Who, "line %d %s", i, e.Action)
		assert.Equal(t, w.before, e.ArtifactGenBefore, "line %d %s: generation before", i, e.Action)
		assert.Equal(t, w.after, e.ArtifactGen, "line %d %s: generation after", i, e.Action)
	}
	assert.Equal(t, "archived", got[8].Lifecycle)
	assert.Equal(t, "reverse", got[9].Method)

	code, out, errs = runCLI(t, s("--json", "stats")...)
	require.Equal(t, 0, code, errs)
	var st forge.Stats
	require.NoError(t, json.Unmarshal([]byte(out), &st), out)
	assert.Equal(t, int64(len(want)), st.Overall.OperatorActions)
	assert.Equal(t, int64(1), st.Overall.OperatorActionsByAction[forge.OpLift])
	code, out, _ = runCLI(t, s("stats")...)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "operator actions 11")
	assert.Contains(t, out, "bless 1")
}

// TestCLIMistakenQuarantineOfFirstGenerationHasAWayBack (issue 23, item 5): rollback, regen with
// the same answer and bless all refuse, each exiting 1 with the way out; `forge quarantine lift`
// puts the code back after the gate passes it again.
func TestCLIMistakenQuarantineOfFirstGenerationHasAWayBack(t *testing.T) {
	store := t.TempDir()
	yaegiRole(t, store)
	s := func(args ...string) []string { return append([]string{"--store", store}, args...) }
	prov := answerScript(t, reverseCode)
	code, _, errs := runCLI(t, s(prov, "call", "str", "reverse", "s=ab")...)
	require.Equal(t, 0, code, errs)
	code, out, errs := runCLI(t, s("quarantine", "str", "reverse")...)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "forge quarantine lift str reverse", "the quarantine names its way back")

	code, _, errs = runCLI(t, s("call", "str", "reverse", "s=x")...)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "forge quarantine lift str reverse", "the refusal names the way back")
	code, _, errs = runCLI(t, s("rollback", "str", "reverse")...)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "no generation before gen-1")
	code, _, errs = runCLI(t, s(prov, "regen", "str", "reverse")...)
	assert.Equal(t, 1, code, "still quarantined is a refusal")
	assert.Contains(t, errs, "still quarantined")
	code, out, _ = runCLI(t, s(prov, "--json", "regen", "str", "reverse")...)
	assert.Equal(t, 1, code)
	var o forge.Outcome
	require.NoError(t, json.Unmarshal([]byte(out), &o), out)
	assert.False(t, o.OK, "--json says the refusal too")
	assert.Equal(t, "refused", o.Err.Type)
	code, _, errs = runCLI(t, s("bless", "str", "reverse")...)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "forge quarantine lift str reverse")

	code, out, errs = runCLI(t, s("quarantine", "lift", "str", "reverse")...)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "quarantine lifted")
	code, out, errs = runCLI(t, s("call", "str", "reverse", "s=ab")...)
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "\"ba\"\n", out)

	code, _, errs = runCLI(t, s("quarantine", "lift", "str", "reverse")...)
	assert.Equal(t, 1, code, "nothing to lift")
	assert.Contains(t, errs, "nothing to lift")
	code, _, _ = runCLI(t, s("quarantine", "lift", "str")...)
	assert.Equal(t, 2, code)
}

// TestCLIEditSaysWhatHappensToTheLifecycle (issue 23, item 6): editing a blessed artifact says,
// before anything is stored, that the edited code is a candidate; --keep-lifecycle keeps it
// blessed; forge watch shows an edit as an edit, not a call.
func TestCLIEditSaysWhatHappensToTheLifecycle(t *testing.T) {
	store := t.TempDir()
	yaegiRole(t, store)
	s := func(args ...string) []string { return append([]string{"--store", store}, args...) }
	code, _, errs := runCLI(t, s(answerScript(t, reverseCode), "call", "str", "reverse", "s=ab")...)
	require.Equal(t, 0, code, errs)
	code, _, errs = runCLI(t, s("bless", "str", "reverse")...)
	require.Equal(t, 0, code, errs)

	t.Setenv("EDITOR", fakeEditor(t, reverseCode+"\n// kept\n"))
	code, out, errs := runCLI(t, s("edit", "str", "reverse", "--keep-lifecycle")...)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, errs, "gen 1 is blessed: the edited code will be generation 2, blessed")
	assert.Contains(t, out, "generation 2 stored (operator:edit): blessed -> blessed")

	t.Setenv("EDITOR", fakeEditor(t, reverseCode+"\n// demoted\n"))
	code, out, errs = runCLI(t, s("edit", "str", "reverse")...)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, errs, "gen 2 is blessed: the edited code will be generation 3, a candidate (no longer blessed)")
	assert.Contains(t, errs, "--keep-lifecycle")
	assert.Contains(t, out, "generation 3 stored (operator:edit): blessed -> candidate")

	evs := operatorEvents(t, store)
	require.NotEmpty(t, evs)
	edit := evs[len(evs)-1]
	require.Equal(t, forge.OpEdit, edit.Action)
	line := formatLive(&forge.LiveEvent{Kind: forge.LiveCall, Time: time.Now(), Call: &edit})
	assert.Contains(t, line, " op    edit str.reverse done by cli")
	assert.Contains(t, line, "gen 2 -> 3 (blessed -> candidate)")
	assert.NotContains(t, line, "call ")
}

// TestCLIShowSaysARegenerationIsPending (issue 23, item 11): `forge show` mentions a pending
// `regen --next-call`.
func TestCLIShowSaysARegenerationIsPending(t *testing.T) {
	store := t.TempDir()
	yaegiRole(t, store)
	s := func(args ...string) []string { return append([]string{"--store", store}, args...) }
	code, _, errs := runCLI(t, s(answerScript(t, reverseCode), "call", "str", "reverse", "s=ab")...)
	require.Equal(t, 0, code, errs)
	code, out, _ := runCLI(t, s("show", "str", "reverse")...)
	require.Equal(t, 0, code)
	assert.NotContains(t, out, "pending")
	code, _, errs = runCLI(t, s("regen", "str", "reverse", "--next-call")...)
	require.Equal(t, 0, code, errs)
	code, out, _ = runCLI(t, s("show", "str", "reverse")...)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "pending:     regenerate on its next call")
}

// TestJSONShapesPerKindOfCommand (issue 23, item 11): one --json shape per kind of command, as
// the README documents: a listing is an array; an action (it changes the store or runs code) is
// an object with "ok" (call, regen, edit and quarantine lift print their Outcome); a read of one
// thing is that thing; a failure is {"ok": false, "error": ...}.
func TestJSONShapesPerKindOfCommand(t *testing.T) {
	store := t.TempDir()
	yaegiRole(t, store)
	s := func(args ...string) []string { return append([]string{"--store", store, "--json"}, args...) }
	t.Setenv("EDITOR", fakeEditor(t, reverseCode+"\n// edited\n"))
	prov := answerScript(t, reverseCode)
	contract := filepath.Join(t.TempDir(), "c.json")
	require.NoError(t, os.WriteFile(contract, []byte(`{"role":"other","purpose":"p","methods":{"f":"func F() int"}}`), 0o644))

	doc := func(args ...string) any {
		t.Helper()
		code, out, errs := runCLI(t, s(args...)...)
		require.Equal(t, 0, code, "%v: %s", args, errs)
		var v any
		require.NoError(t, json.Unmarshal([]byte(out), &v), "%v: one JSON document: %s", args, out)
		return v
	}
	action := func(args ...string) {
		t.Helper()
		m, ok := doc(args...).(map[string]any)
		require.True(t, ok, "%v: an action prints an object", args)
		assert.Equal(t, true, m["ok"], "%v: an action's object says ok", args)
	}
	listing := func(args ...string) {
		t.Helper()
		_, ok := doc(args...).([]any)
		assert.True(t, ok, "%v: a listing prints an array", args)
	}
	read := func(args ...string) {
		t.Helper()
		_, ok := doc(args...).(map[string]any)
		assert.True(t, ok, "%v: a read prints an object", args)
	}

	action("role", "add", "-f", contract)
	action(prov, "call", "str", "reverse", "s=ab")
	action("bless", "str", "reverse")
	action("quarantine", "str", "reverse")
	action("quarantine", "lift", "str", "reverse")
	action("regen", "str", "reverse", "--next-call")
	action(prov, "regen", "str", "reverse")
	action("edit", "str", "reverse")
	action("rollback", "str", "reverse")
	action("prune")
	action("doctor")
	listing("ls")
	listing("role", "ls")
	listing("history", "str", "reverse")
	listing("stale")
	listing("quarantine", "ls")
	read("show", "str", "reverse")
	read("role", "show", "str")
	read("stats")

	code, out, _ := runCLI(t, s("bless", "str", "nope")...)
	assert.Equal(t, 1, code)
	var fail map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &fail), out)
	assert.Equal(t, false, fail["ok"])
	assert.NotNil(t, fail["error"])
}

// TestBinREADMEOperatorSession (issue 22 item 9, issue 23 items 5 and 6): the README's operator
// session, each line as written, from the repository root; a quoted text in a line's comment is
// what its output says. Each action is one line of the event log.
func TestBinREADMEOperatorSession(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	_, block, ok := strings.Cut(string(readme), "An operator's session, from the repository root")
	require.True(t, ok, "the README's operator session")
	var lines []string
	started := false
	for _, ln := range strings.Split(block, "\n") {
		if strings.HasPrefix(ln, "    forge ") {
			started = true
			lines = append(lines, strings.TrimPrefix(ln, "    "))
		} else if started {
			break
		}
	}
	require.GreaterOrEqual(t, len(lines), 8, "%q", lines)
	path, err := forgeBinary()
	require.NoError(t, err)
	store := t.TempDir()
	editor := filepath.Join(t.TempDir(), "editor.sh")
	require.NoError(t, os.WriteFile(editor, []byte("#!/bin/sh\necho '// reviewed' >> \"$1\"\n"), 0o755))
	comment := regexp.MustCompile(`\s+#\s*(.*)$`)
	quoted := regexp.MustCompile(`"([^"]+)"`)
	for _, ln := range lines {
		cmdline, want := ln, ""
		if m := comment.FindStringSubmatchIndex(ln); m != nil {
			cmdline = ln[:m[0]]
			if q := quoted.FindStringSubmatch(ln[m[2]:m[3]]); q != nil {
				want = q[1]
			}
		}
		args := strings.Fields(cmdline)[1:]
		cmd := exec.Command(path, append([]string{"--store", store}, args...)...)
		cmd.Dir = "../.."
		cmd.Env = append(os.Environ(), "FORGE_PROVIDER=", "FORGE_SANDBOX=yaegi", "EDITOR="+editor)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s: %s", ln, out)
		if want != "" {
			assert.Contains(t, string(out), want, ln)
		}
	}
	var actions []string
	for _, e := range operatorEvents(t, store) {
		assert.True(t, e.OK, e.Action)
		assert.Equal(t, forge.CLIClient(), e.Who)
		actions = append(actions, e.Action)
	}
	assert.Equal(t, []string{forge.OpDefineRole, forge.OpBless, forge.OpQuarantine, forge.OpLift, forge.OpRegenNextCall, forge.OpEdit}, actions)
}

// TestWatchShowsAnEditAsAnEdit (issue 23, item 6): `forge watch` printed an edit made by another
// command as a call ("call text.upper ok regenerated gen 2 ... provider_calls 0"); it is an
// operator action now, in text ("op") and in --json ("kind":"operator").
func TestWatchShowsAnEditAsAnEdit(t *testing.T) {
	store, s := liveStore(t)
	for _, jsonOut := range []bool{false, true} {
		var out, errb syncBuffer
		a := &app{stdout: &out, stderr: &errb, jsonOut: jsonOut}
		f, err := forge.Open(forge.Options{Store: store, NoEvents: true})
		require.NoError(t, err)
		require.NoError(t, f.Watch())
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		live := make(chan struct{})
		go func() { done <- watchLoop(ctx, a, f, forge.Filter{Role: "text"}, func() { close(live) }) }()
		<-live // the tail starts at the end of the log

		t.Setenv("EDITOR", fakeEditor(t, fmt.Sprintf("package artifact\n\nfunc Upper(s string) string { return s } // %v\n", jsonOut)))
		code, _, errOut := runCLI(t, s("edit", "text", "upper", "--accept-changes")...) // it changes the answers the calls got
		require.Equal(t, 0, code, errOut)
		want := " op    edit text.upper done by " + forge.CLIClient()
		if jsonOut {
			want = `"kind":"operator"`
		}
		deadline := time.Now().Add(10 * time.Second) // a hang bound
		for !strings.Contains(out.String(), want) {
			require.True(t, time.Now().Before(deadline), "watch printed %q", out.String())
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
		require.NoError(t, <-done)
		require.NoError(t, f.Close())
		if !jsonOut {
			assert.NotContains(t, out.String(), "call  text.upper ok regenerated", "an edit is not a call")
		}
	}
}
