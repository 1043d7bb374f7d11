package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests come from trying forge as a new user and an operator would, following the README.

// TestHelpListsEachCommandOnce: `forge --help` listed quarantine twice (it was registered by two
// files).
func TestHelpListsEachCommandOnce(t *testing.T) {
	code, out, _ := runCLI(t, "--help")
	assert.Equal(t, 0, code)
	seen := map[string]bool{}
	in := false
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "Available Commands:") {
			in = true
			continue
		}
		if in && strings.TrimSpace(line) == "" {
			break
		}
		if in {
			name := strings.Fields(line)[0]
			assert.False(t, seen[name], "command %s listed twice", name)
			seen[name] = true
		}
	}
	assert.True(t, seen["quarantine"], out)
}

// answerScript writes a `command:` provider that answers every request with code and returns
// the --provider flag that runs it.
func answerScript(t *testing.T, code string) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "answer.go.txt")
	require.NoError(t, os.WriteFile(src, []byte(code), 0o644))
	script := filepath.Join(dir, "gen.sh")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\ncat >/dev/null\ncat "+src+"\n"), 0o755))
	return "--provider=command:" + script
}

// yaegiRole writes a contract for role str (method reverse, in-process yaegi) and adds it.
func yaegiRole(t *testing.T, store string) {
	t.Helper()
	c := filepath.Join(t.TempDir(), "str.json")
	require.NoError(t, os.WriteFile(c, []byte(`{"role":"str","purpose":"string utilities","sandbox":"yaegi",
"methods":{"reverse":"func Reverse(s string) string"},
"acceptance":{"examples":[{"method":"reverse","args":{"s":"abc"},"expect":"cba"}]}}`), 0o644))
	code, _, errs := runCLI(t, "--store", store, "role", "add", "-f", c)
	require.Equal(t, 0, code, errs)
}

const reverseCode = "package artifact\n\nfunc Reverse(s string) string {\n\tr := []rune(s)\n\tfor i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {\n\t\tr[i], r[j] = r[j], r[i]\n\t}\n\treturn string(r)\n}\n"

// TestRegenOfQuarantinedSameCodeSaysTheWayOut: a quarantined artifact with one generation is
// told to `forge regen`; when the model writes the same code again the quarantine stands, and
// regen said only "generation 1 kept", leaving the operator with a method that still refuses
// every call. It now says so and names the ways out.
func TestRegenOfQuarantinedSameCodeSaysTheWayOut(t *testing.T) {
	store := t.TempDir()
	yaegiRole(t, store)
	prov := answerScript(t, reverseCode)
	code, out, errs := runCLI(t, "--store", store, prov, "call", "str", "reverse", "s=hello")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "\"olleh\"\n", out)
	code, _, errs = runCLI(t, "--store", store, "quarantine", "str", "reverse")
	require.Equal(t, 0, code, errs)
	code, _, errs = runCLI(t, "--store", store, prov, "regen", "str", "reverse")
	require.Equal(t, 1, code, "a refusal exits non-zero (issue 23, item 5)")
	assert.Contains(t, errs, "generation 1 kept")
	assert.Contains(t, errs, "still quarantined")
	assert.Contains(t, errs, "forge edit str reverse")
	assert.Contains(t, errs, "forge quarantine lift str reverse")
	code, _, errs = runCLI(t, "--store", store, "call", "str", "reverse", "s=x")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "quarantined")

	// Not quarantined: the same answer says nothing of a quarantine.
	other := t.TempDir()
	yaegiRole(t, other)
	code, _, errs = runCLI(t, "--store", other, prov, "call", "str", "reverse", "s=hello")
	require.Equal(t, 0, code, errs)
	code, out, errs = runCLI(t, "--store", other, prov, "regen", "str", "reverse")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "generation 1 kept")
	assert.NotContains(t, out, "quarantined")
}

// TestMalformedJSONSaysWhere: a contract file or --args that is not JSON was reported as
// "unexpected EOF" or "not valid JSON" with no position; the message now names the line and
// column and, for --args, the forms that are accepted.
func TestMalformedJSONSaysWhere(t *testing.T) {
	store := t.TempDir()
	dir := t.TempDir()
	truncated := filepath.Join(dir, "truncated.json")
	require.NoError(t, os.WriteFile(truncated, []byte("{\"role\":\"bad\", \"purpose\":\n"), 0o644))
	code, _, errs := runCLI(t, "--store", store, "role", "add", "-f", truncated)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "unexpected EOF (at line 1, column 25)")
	assert.Contains(t, errs, "fix the contract and run `forge role add -f "+truncated+"` again")

	colon := filepath.Join(dir, "colon.json")
	require.NoError(t, os.WriteFile(colon, []byte("{\n \"role\": \"x\",\n \"purpose\" \"y\"\n}\n"), 0o644))
	code, _, errs = runCLI(t, "--store", store, "role", "add", "-f", colon)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "(at line 3, column 12)")

	// A wrong type is not a syntax error: the message names the field and what it takes, no
	// position, and none of Go's type names.
	typed := filepath.Join(dir, "typed.json")
	require.NoError(t, os.WriteFile(typed, []byte(`{"role":"x","purpose":"p","methods":["a"]}`), 0o644))
	code, _, errs = runCLI(t, "--store", store, "role", "add", "-f", typed)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, `methods: got a JSON array, want an object, e.g. "methods": {"upper"`)
	assert.NotContains(t, errs, "Go struct")
	assert.NotContains(t, errs, "(at line")

	code, _, errs = runCLI(t, "--store", store, "call", "text", "upper", "--args", "{bad")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "line 1, column 2: invalid character 'b'")
	assert.Contains(t, errs, "name=value pairs")
	code, _, errs = runCLI(t, "run", "x.go", "--args", "[1,")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "line 1, column 3: unexpected end of JSON input")
	// The usual slips are named (a shell user's single quotes inside the JSON, a trailing comma).
	code, _, errs = runCLI(t, "--store", store, "call", "text", "upper", "--args", "{'s':'x'}")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "JSON strings and keys take double quotes")
	code, _, errs = runCLI(t, "--store", store, "call", "text", "upper", "--args", `{"s":"x",}`)
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "JSON takes no comma before a closing }")
}

// TestEventLogUnwritableSaysEventsOff: a store whose event log cannot be opened (read-only for
// this user; here a directory in the file's place, which fails the same open even as root)
// told the CLI user to "open with NoEvents", a library option; it now names --events off, and
// that works.
func TestEventLogUnwritableSaysEventsOff(t *testing.T) {
	store := t.TempDir()
	yaegiRole(t, store)
	log := filepath.Join(store, "events", "forge.jsonl")
	require.NoError(t, os.Remove(log)) // role add's line (define_role)
	require.NoError(t, os.MkdirAll(log, 0o755))
	prov := answerScript(t, reverseCode)
	code, _, errs := runCLI(t, "--store", store, prov, "call", "str", "reverse", "s=abc")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "--events off")
	assert.NotContains(t, errs, "open with NoEvents")
	code, out, errs := runCLI(t, "--store", store, prov, "--events", "off", "call", "str", "reverse", "s=abc")
	assert.Equal(t, 0, code, errs)
	assert.Equal(t, "\"cba\"\n", out)
}

// TestBinInterruptedColdCall: Ctrl-C (SIGINT) during a cold call ended forge with exit 1 and the
// library's message for a long-lived process ("the generation goes on for the other callers and
// the next call"), which is not true of a CLI process: the generation dies with it. It now exits
// 130, says the generation was abandoned, stores nothing, and leaves no provider process behind;
// the next call generates.
func TestBinInterruptedColdCall(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("SIGINT")
	}
	path, err := forgeBinary()
	require.NoError(t, err)
	store := t.TempDir()
	yaegiRole(t, store)
	dir := t.TempDir()
	started := filepath.Join(dir, "started")
	finished := filepath.Join(dir, "finished")
	src := filepath.Join(dir, "answer.go.txt")
	require.NoError(t, os.WriteFile(src, []byte(reverseCode), 0o644))
	script := filepath.Join(dir, "slow.sh")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\ncat >/dev/null\ntouch "+started+"\nsleep 5\ncat "+src+"\ntouch "+finished+"\n"), 0o755))

	cmd := exec.Command(path, "--store", store, "--provider", "command:"+script, "call", "str", "reverse", "s=abc")
	cmd.Env = append(os.Environ(), "FORGE_PROVIDER=")
	var out, errb syncBuffer // read while the process writes them
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Start())
	deadline := time.Now().Add(2 * time.Minute) // a hang, not a speed bound
	for {
		if _, err := os.Stat(started); err == nil {
			break
		}
		require.True(t, time.Now().Before(deadline), "the provider never started: %s", errb.String())
		time.Sleep(20 * time.Millisecond)
	}
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	err = cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "stdout %q stderr %q", out.String(), errb.String())
	assert.Equal(t, exitInterrupted, ee.ExitCode(), errb.String())
	assert.Contains(t, errb.String(), "interrupted (SIGINT): call str.reverse stopped")
	assert.NotContains(t, errb.String(), "goes on for the other callers and the next call")
	assert.Empty(t, out.String())

	time.Sleep(6 * time.Second) // longer than the script's sleep: had it survived, it would finish now
	_, err = os.Stat(finished)
	assert.True(t, os.IsNotExist(err), "the provider process outlived forge")
	code, lsOut, _ := runCLI(t, "--store", store, "ls")
	assert.Equal(t, 0, code)
	assert.NotContains(t, lsOut, "reverse", "nothing was stored")

	code, callOut, errs := runCLI(t, "--store", store, answerScript(t, reverseCode), "call", "str", "reverse", "s=abc")
	assert.Equal(t, 0, code, errs)
	assert.Equal(t, "\"cba\"\n", callOut)
}

// TestInterruptedOnlyWhenTheContextEnded: a failure with a live context is not an interrupt.
func TestInterruptedOnlyWhenTheContextEnded(t *testing.T) {
	assert.NoError(t, interrupted(context.Background(), "r", "m", "call"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := interrupted(ctx, "r", "m", "regen")
	assert.Equal(t, exitInterrupted, exitCode(err))
	assert.ErrorContains(t, err, "regen r.m stopped")
}

// TestBinMCPRequestsFromAFile: `forge mcp < requests` answered the first request only (the SDK
// ended the session at end of input and dropped the answers still being computed), and a line
// that was not JSON ended the session with exit 1. Every request is answered now, the bad line
// gets a JSON-RPC parse error, and the session goes on.
func TestBinMCPRequestsFromAFile(t *testing.T) {
	store := t.TempDir()
	yaegiRole(t, store)
	code, _, errs := runCLI(t, "--store", store, answerScript(t, reverseCode), "call", "str", "reverse", "s=abc")
	require.Equal(t, 0, code, errs)
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"hand","version":"0"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{bad json`,
		`{"jsonrpc":"2.0","id":"three","method":"tools/call","params":{"name":"forge_call","arguments":{"role":"str","method":"reverse","args":{"s":"mcp"}}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"nope","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":5.0,"method":"ping"}`,
	}, "\n") // no newline after the last line
	r := bin(t, strings.NewReader(in), nil, "--store", store, "mcp")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stderr, "input line 4 is not JSON (line 1, column 2)")
	answers := map[string]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		answers[fmt.Sprint(m["id"])] = m
	}
	for _, id := range []string{"1", "2", "three", "4", "5", "<nil>"} {
		assert.Contains(t, answers, id, "no answer with id %s in %s", id, r.stdout)
	}
	assert.EqualValues(t, -32700, answers["<nil>"]["error"].(map[string]any)["code"])
	assert.Contains(t, fmt.Sprint(answers["three"]["result"]), "pcm")
	assert.Contains(t, fmt.Sprint(answers["2"]["result"]), "forge_call")
}

// TestMissingRequiredFlagIsUsage: a flag a command requires (knowledge record --domain) left out
// exited 1, as a failed operation; it is the command line's misuse: exit 2, also under --json.
func TestMissingRequiredFlagIsUsage(t *testing.T) {
	store := t.TempDir()
	code, _, errs := runCLI(t, "--store", store, "knowledge", "record", "a lesson")
	assert.Equal(t, exitUsage, code, errs)
	assert.Contains(t, errs, `required flag(s) "domain" not set`)
	code, out, _ := runCLI(t, "--store", store, "--json", "knowledge", "record", "a lesson")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, out, `"kind": "usage"`)
}

// TestTooFewArgsSaysAtLeast: `forge call text` said "want 2 to 9223372036854775807 argument(s)".
func TestTooFewArgsSaysAtLeast(t *testing.T) {
	code, _, errs := runCLI(t, "--store", t.TempDir(), "call", "text")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errs, "call: want at least 2 argument(s), got 1; usage: forge call ROLE METHOD")
	assert.NotContains(t, errs, "9223372036854775807")
	code, _, errs = runCLI(t, "--store", t.TempDir(), "rollback", "a", "b", "1", "2")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errs, "want 2 to 3 argument(s), got 4")
}

// TestEditWithoutEditorOffATerminal: with no $EDITOR or $VISUAL, `forge edit` ran vi on a pipe,
// which drew its screen into the output and failed; it now says what to set instead.
func TestEditWithoutEditorOffATerminal(t *testing.T) {
	store := t.TempDir()
	yaegiRole(t, store)
	code, _, errs := runCLI(t, "--store", store, answerScript(t, reverseCode), "call", "str", "reverse", "s=abc")
	require.Equal(t, 0, code, errs)
	t.Setenv("EDITOR", "")
	t.Setenv("VISUAL", "")
	was := stdinIsTerminal
	stdinIsTerminal = func() bool { return false }
	defer func() { stdinIsTerminal = was }()
	code, out, errs := runCLI(t, "--store", store, "edit", "str", "reverse")
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Contains(t, errs, "neither $EDITOR nor $VISUAL is set and stdin is not a terminal")
	assert.Contains(t, errs, "nothing stored")
}

// TestUnknownRoleNamesTheClosest: a typo in a role name (`forge call txet upper`) said only that
// the role is not found and how to add one; it now names the role the operator likely meant, or
// the roles there are.
func TestUnknownRoleNamesTheClosest(t *testing.T) {
	store := t.TempDir()
	yaegiRole(t, store)
	code, _, errs := runCLI(t, "--store", store, "call", "sstr", "reverse", "s=x")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, `role "sstr": not found`)
	assert.Contains(t, errs, "did you mean str?")
	code, _, errs = runCLI(t, "--store", store, "call", "unrelated", "reverse", "s=x")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "roles in this store: str")
	assert.Equal(t, 0, editDistance("text", "text"))
	assert.Equal(t, 2, editDistance("txet", "text"))
	assert.Equal(t, 3, editDistance("", "abc"))
}

// TestCallMissingArgSaysHowToGiveIt: `forge call str reverse` with no args said "missing
// argument s (string)" and nothing of how to pass it.
func TestCallMissingArgSaysHowToGiveIt(t *testing.T) {
	store := t.TempDir()
	yaegiRole(t, store)
	code, _, errs := runCLI(t, "--store", store, answerScript(t, reverseCode), "call", "str", "reverse", "s=abc")
	require.Equal(t, 0, code, errs)
	code, _, errs = runCLI(t, "--store", store, "call", "str", "reverse")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "missing argument s (string)")
	assert.Contains(t, errs, "on the command line: name=value per parameter, or all of them with --args JSON (the signature: `forge show str reverse`)")
}
