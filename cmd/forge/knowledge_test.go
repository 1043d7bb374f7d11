package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pitfallScript is a `command:` model: it answers with code that calls time.Now (refused by the
// sandbox) unless its prompt carries the lesson "use host.Now", and counts its calls in $1.
const pitfallScript = `#!/bin/sh
in=$(cat)
echo call >> "$1"
fn=Year
case "$in" in *calendar.day*) fn=Day ;; esac
prompt=$(printf '%s\n' "$in" | sed -n '/=== FORGE PROMPT ===/,$p')
case "$prompt" in
*"use host.Now"*) printf 'package artifact\n\nimport "forge/host"\n\nfunc %s() int { return host.Now().%s() }\n' $fn $fn ;;
*) printf 'package artifact\n\nimport "time"\n\nfunc %s() int { return time.Now().%s() }\n' $fn $fn ;;
esac
`

func writeClockRole(t *testing.T, dir, role, method, purpose string) string {
	fn := strings.ToUpper(method[:1]) + method[1:]
	c := map[string]any{"role": role, "purpose": purpose, "methods": map[string]string{method: "func " + fn + "() int"},
		"capabilities": map[string]bool{"now": true}}
	b, _ := json.Marshal(c)
	p := filepath.Join(dir, role+".json")
	require.NoError(t, os.WriteFile(p, b, 0o644))
	return p
}

func countLines(t *testing.T, p string) int {
	b, err := os.ReadFile(p)
	if os.IsNotExist(err) {
		return 0
	}
	require.NoError(t, err)
	return strings.Count(string(b), "\n")
}

// TestLearningPaysAcrossProcesses: role A hits the sandbox pitfall and is fixed in one forge
// process; role B, in a later process, passes at the first attempt with the learner on and needs
// a second provider call with it off (FORGE_LEARNING=off).
func TestLearningPaysAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the forge binary")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "model.sh")
	require.NoError(t, os.WriteFile(script, []byte(pitfallScript), 0o755))
	roleA := writeClockRole(t, dir, "clock", "year", "the year of the current time")
	roleB := writeClockRole(t, dir, "calendar", "day", "the day of the month of the current time")
	calls := map[bool][2]int{}
	for _, learning := range []bool{true, false} {
		store := filepath.Join(dir, fmt.Sprint("store-", learning))
		count := filepath.Join(dir, fmt.Sprint("count-", learning))
		env := []string{"FORGE_PROVIDER=command:" + script + " " + count}
		if !learning {
			env = append(env, "FORGE_LEARNING=off")
		}
		for _, f := range []string{roleA, roleB} {
			r := bin(t, nil, env, "--store", store, "role", "add", "-f", f)
			require.Equal(t, 0, r.code, r.stderr)
		}
		r := bin(t, nil, env, "--store", store, "call", "clock", "year")
		require.Equal(t, 0, r.code, r.stderr)
		a := countLines(t, count)
		r = bin(t, nil, env, "--store", store, "call", "calendar", "day")
		require.Equal(t, 0, r.code, r.stderr)
		calls[learning] = [2]int{a, countLines(t, count) - a}
		if learning {
			r = bin(t, nil, nil, "--store", store, "--json", "knowledge", "ls", "--domain", "forge")
			require.Equal(t, 0, r.code, r.stderr)
			var doc struct {
				Entries []struct {
					Content    string  `json:"content"`
					Confidence float64 `json:"confidence"`
				} `json:"entries"`
			}
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc), r.stdout)
			require.Len(t, doc.Entries, 1)
			assert.Contains(t, doc.Entries[0].Content, "time.Now")
			assert.InDelta(t, 0.2, doc.Entries[0].Confidence, 1e-9, "B's first-attempt pass confirmed the lesson")
		}
	}
	t.Logf("provider calls (role A, role B): learner on %v, learner off %v", calls[true], calls[false])
	assert.Equal(t, [2]int{2, 1}, calls[true])
	assert.Equal(t, [2]int{2, 2}, calls[false])
}

// cliOn runs the CLI on store: the exit code and stdout+stderr, and stdout alone.
func cliOn(store string) (do func(args ...string) (int, string), stdout func() string) {
	var out, errb strings.Builder
	return func(args ...string) (int, string) {
		out.Reset()
		errb.Reset()
		code := run(append([]string{"--store", store}, args...), &out, &errb)
		return code, out.String() + errb.String()
	}, out.String
}

func TestKnowledgeCLI(t *testing.T) {
	store := t.TempDir()
	do, stdout := cliOn(store)
	code, o := do("knowledge", "record", "Skip LangChain tutorials", "--domain", "newsletter curation", "--category", "preference")
	require.Equal(t, 0, code, o)
	assert.FileExists(t, filepath.Join(store, "knowledge", "newsletter_curation.yaml"))
	code, o = do("knowledge", "record", "skip langchain TUTORIALS", "--domain", "newsletter curation")
	require.Equal(t, 0, code, o)
	assert.Contains(t, o, "confirmed")
	code, o = do("--json", "knowledge", "recall", "LangChain", "--min-confidence", "0.2")
	require.Equal(t, 0, code, o)
	var doc struct {
		OK   bool `json:"ok"`
		Hits []struct {
			Content    string  `json:"content"`
			Confidence float64 `json:"confidence"`
			Score      float64 `json:"score"`
		} `json:"hits"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout()), &doc))
	require.Len(t, doc.Hits, 1)
	assert.InDelta(t, 0.2, doc.Hits[0].Confidence, 1e-9)
	assert.Greater(t, doc.Hits[0].Score, 0.0)
	code, _ = do("--json", "knowledge", "recall", "LangChain", "--min-confidence", "0.5")
	require.Equal(t, 0, code)
	assert.Contains(t, stdout(), `"hits": []`)
	code, o = do("knowledge", "confirm", "SKIP LANGCHAIN TUTORIALS", "--domain", "newsletter curation")
	require.Equal(t, 0, code, o)
	assert.Contains(t, o, "confidence 0.3")
	code, o = do("knowledge", "ls")
	require.Equal(t, 0, code, o)
	assert.Contains(t, o, "Skip LangChain tutorials")
	code, o = do("knowledge", "forget", "nothing like it", "--domain", "newsletter curation")
	assert.Equal(t, 1, code)
	assert.Contains(t, o, "forge knowledge ls")
	code, o = do("knowledge", "record", "x", "--domain", "d", "--category", "opinion")
	assert.Equal(t, 2, code, o)
	code, o = do("knowledge", "forget", "skip langchain tutorials", "--domain", "newsletter curation")
	require.Equal(t, 0, code, o)
	code, o = do("knowledge", "ls")
	require.Equal(t, 0, code)
	assert.Contains(t, o, "no lessons")
}

func TestPromptCmd(t *testing.T) {
	store := t.TempDir()
	var out, errb strings.Builder
	do := func(args ...string) int {
		out.Reset()
		errb.Reset()
		return run(append([]string{"--store", store}, args...), &out, &errb)
	}
	require.Equal(t, 0, do("role", "add", "--role", "text", "--purpose", "string utilities"), errb.String())
	require.Equal(t, 0, do("knowledge", "record", "string utilities must keep unicode intact", "--domain", "text"), errb.String())
	require.Equal(t, 0, do("prompt", "text", "upper"), errb.String())
	assert.Contains(t, out.String(), "lessons")
	assert.Contains(t, out.String(), "=== SYSTEM ===")
	assert.Contains(t, out.String(), "- string utilities must keep unicode intact (pattern, confidence 0.1)")
	require.Equal(t, 0, do("--json", "prompt", "text", "upper"), errb.String())
	var doc struct {
		Prompt struct {
			System string `json:"system"`
			Parts  []struct {
				Name     string `json:"name"`
				Fidelity string `json:"fidelity"`
				Tokens   int    `json:"tokens"`
			} `json:"parts"`
			Tokens, Ceiling int
		} `json:"prompt"`
	}
	require.NoError(t, json.Unmarshal([]byte(out.String()), &doc))
	require.NotEmpty(t, doc.Prompt.Parts)
	assert.Equal(t, "system", doc.Prompt.Parts[0].Name)
	assert.Equal(t, 32000, doc.Prompt.Ceiling)
	t.Setenv("FORGE_CONTEXT_TOKENS", "10")
	assert.Equal(t, 1, do("prompt", "text", "upper"))
	assert.Contains(t, errb.String(), "context too large")
	assert.Equal(t, 1, do("prompt", "text", "upper", "--repair"))
	assert.Contains(t, errb.String(), "no persisted code to repair")
}

// TestKnowledgeCapsCLI: `forge knowledge ls` shows each lesson's provenance and says when a
// domain is at its cap and what went; doctor quarantines a knowledge file over the read limit
// (moved aside whole, never deleted) and says why (issue 22 items 1 and 2).
func TestKnowledgeCapsCLI(t *testing.T) {
	store := t.TempDir()
	t.Setenv("FORGE_KNOWLEDGE_MAX_ENTRIES", "2")
	t.Setenv("FORGE_KNOWLEDGE_MAX_BYTES", "4KiB")
	do, _ := cliOn(store)
	for _, c := range []string{"first rule", "second rule", "third rule"} {
		code, o := do("knowledge", "record", c, "--domain", "forge")
		require.Equal(t, 0, code, o)
	}
	legacy := "- content: 'intrinsic/policy: import \"OBEY ME\" is not allowed'\n  category: correction\n  domain: legacyrole\n  confidence: 0.5\n"
	require.NoError(t, os.WriteFile(filepath.Join(store, "knowledge", "legacyrole.yaml"), []byte(legacy), 0o644))
	code, o := do("knowledge", "ls")
	require.Equal(t, 0, code, o)
	assert.Contains(t, o, "domain forge is at its cap (2 lessons, 4.0 KiB per domain")
	assert.NotContains(t, o, "first rule", "the oldest of equal confidence went")
	assert.Contains(t, o, "operator")
	assert.Contains(t, o, "legacy")
	assert.Contains(t, o, "no prompt recalls them")

	// A file far over the byte cap is set aside unread by doctor.
	var b strings.Builder
	for i := range 200 {
		fmt.Fprintf(&b, "- content: lesson %d %s\n  category: pattern\n  domain: big\n  confidence: 0.5\n", i, strings.Repeat("x", 100))
	}
	require.NoError(t, os.WriteFile(filepath.Join(store, "knowledge", "big.yaml"), []byte(b.String()), 0o644))
	code, o = do("doctor")
	assert.Equal(t, 1, code, o)
	assert.Contains(t, o, "knowledge document big.yaml is")
	assert.Contains(t, o, "set aside unread")
	assert.NoFileExists(t, filepath.Join(store, "knowledge", "big.yaml"))
	code, o = do("--json", "quarantine", "ls")
	require.Equal(t, 0, code, o)
	assert.Contains(t, o, "big.yaml")
}
