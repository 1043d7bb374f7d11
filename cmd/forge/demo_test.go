package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/fixtures/baselines"
	"github.com/artifactforge/forge/forge"
)

var updateBaselines = flag.Bool("update", false, "rewrite the baseline traces in fixtures/baselines/")

// TestDemo runs `forge demo --json` in-process: every step must behave as expected (exit 0), the
// narration must tell each step, and the normalized event trace must match the recorded baseline.
func TestDemo(t *testing.T) {
	// A machine whose warm-up marker is absent (the user's cache dir of this test alone): the demo
	// warms the wasm sandbox visibly, whatever other tests of this machine marked before.
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	var stdout, stderr bytes.Buffer
	code := run([]string{"demo", "--json"}, &stdout, &stderr)
	require.Equal(t, exitOK, code, "stderr:\n%s", stderr.String())
	out := stderr.String()
	for _, line := range []string{
		"1. first call generates, verifies and persists",
		`text.upper {"s":"hello"} -> "HELLO"`,
		"generated gen-1, decision generate:missing, provider calls 1",
		`text.upper {"s":"forge"} -> "FORGE"`,
		"persisted gen-1, decision execute:healthy, provider calls 0",
		"1000 warm calls",
		"provider calls 0, failures 0",
		"-> error extrinsic/host_http_5xx (host)",
		"after:  gen-1 (initial_forge), lifecycle candidate, counters: success 1, intrinsic 0, adaptive 0, extrinsic 1; repairs since regeneration 0",
		`text.capitalize {"s":""} -> ""`,
		"repaired gen-2, decision execute:healthy, provider calls 1, repair attempted, succeeded true",
		"regenerated gen-5, decision execute:healthy, provider calls 1",
		"now: gen-5 (regenerate:budget_exhausted)",
		"forge bless text upper -> ok",
		"decision execute:blessed",
		"-> error extrinsic/quarantined (refused): text.upper is quarantined: run `forge rollback text upper`",
		"now: gen-3 (operator:rollback:gen-1), lifecycle durable",
		`text.upper {"s":"rolled back"} -> "ROLLED BACK"`,
		"7. a lesson is learned by one role and reused by another",
		"learned (forge domain, forge (clock), confidence 0.1): policy: time.Now is not available in the sandbox: use host.Now()",
		"reused: another role passed at the first attempt; the lesson is confirmed (confidence 0.2)",
		"ok: every step behaved as expected (1019 calls, 4 operator actions, 13 provider calls,",
	} {
		assert.Contains(t, out, line)
	}
	assert.NotContains(t, out, "!!")
	if strings.Contains(out, "; sandbox wasm\n") {
		// A fresh store: the wasm sandbox is warmed first, visibly (issue 25).
		assert.Contains(t, out, "preparing the wasm sandbox (the Go toolchain compiles its standard library for wasm once")
		assert.Contains(t, out, "sandbox ready in ")
	}

	got, err := baselines.Normalize(stdout.Bytes())
	require.NoError(t, err)
	require.NoError(t, baselines.Compare("demo.jsonl", got, *updateBaselines))
}

// TestDemoKeepsNamedStore: with --store the narration goes to stdout and the store stays.
func TestDemoKeepsNamedStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "kept")
	var stdout, stderr bytes.Buffer
	require.Equal(t, exitOK, run([]string{"demo", "--sandbox", "yaegi", "--store", dir}, &stdout, &stderr), "stderr:\n%s", stderr.String())
	assert.Contains(t, stdout.String(), "(kept)")
	assert.Contains(t, stdout.String(), "ok: every step behaved as expected")
	assert.FileExists(t, filepath.Join(dir, "tools", "text", "lower.json"))
	assert.FileExists(t, filepath.Join(dir, "events", "forge.jsonl"))

	// A second demo on the same store would not start fresh: refused as a usage error.
	stdout.Reset()
	stderr.Reset()
	assert.Equal(t, exitUsage, run([]string{"demo", "--store", dir}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "is not empty")
}

func TestDemoRejectsArgs(t *testing.T) {
	var stdout, stderr bytes.Buffer
	assert.Equal(t, exitUsage, run([]string{"demo", "extra"}, &stdout, &stderr))
}

// TestDemoTemporaryStoreIsRemoved checks that the default run leaves nothing behind in TMPDIR.
func TestDemoTemporaryStoreIsRemoved(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole demo")
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	var stdout, stderr bytes.Buffer
	require.Equal(t, exitOK, run([]string{"demo", "--sandbox", "yaegi"}, &stdout, &stderr), "stderr:\n%s", stderr.String())
	left, err := os.ReadDir(tmp)
	require.NoError(t, err)
	assert.Empty(t, left)
}

// TestDemoReportsDifferences: when a step does not behave (here the repair answer is missing from
// the cassette), the demo says which step and what differed, and exits 1.
func TestDemoReportsDifferences(t *testing.T) {
	orig := demoCassette
	t.Cleanup(func() { demoCassette = orig })
	demoCassette = bytes.Replace(orig, []byte(`"method": "capitalize", "kind": "repair", "attempt": 1`),
		[]byte(`"method": "capitalize", "kind": "repair", "attempt": 9`), 1)
	require.NotEqual(t, orig, demoCassette)

	var stdout, stderr bytes.Buffer
	require.Equal(t, exitFailed, run([]string{"demo", "--sandbox", "yaegi"}, &stdout, &stderr))
	assert.Contains(t, stdout.String(), `!! step 4: text.capitalize {"s":""}: ok = false, want true`)
	assert.Contains(t, stderr.String(), "expectation(s) not met")
	assert.Contains(t, stderr.String(), "step 4: ")
	assert.NotContains(t, stderr.String(), "step 5: ", "the other steps still behave")
	assert.NotContains(t, stdout.String(), "ok: every step behaved as expected")
}

// TestDemoLegendNamesEveryTerm: the demo's narration printed "decision generate:missing",
// "gen-2 (repair:intrinsic)", "extrinsic/host_http_5xx" and "lifecycle durable" with nothing to
// say what they mean to someone who never read the code. Its legend now names every decision,
// program source, generation trigger and failure class the demo's recorded trace holds.
func TestDemoLegendNamesEveryTerm(t *testing.T) {
	data, err := os.ReadFile(baselines.Path("demo.jsonl"))
	require.NoError(t, err)
	terms := map[string]bool{"candidate": true, "durable": true, "blessed": true}
	for line := range strings.Lines(string(data)) {
		var e struct {
			Action        string `json:"action"`
			Reason        string `json:"reason"`
			ProgramSource string `json:"program_source"`
			FailureClass  string `json:"failure_class"`
			Trigger       string `json:"artifact_generation_trigger"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &e))
		if e.Reason == "operator" {
			terms[e.Action] = true
		} else {
			terms[e.Action+":"+e.Reason] = true
		}
		trigger, _, _ := strings.Cut(e.Trigger, ":gen-")
		for _, s := range []string{e.ProgramSource, e.FailureClass, trigger} {
			if s != "" {
				terms[s] = true
			}
		}
	}
	terms["intrinsic"], terms["adaptive"], terms["caller"] = true, true, true // the counters' classes
	for term := range terms {
		assert.Contains(t, demoLegend, term, "the legend says what %q means", term)
	}
}

// TestStatsLatencyReadable: `forge stats` printed latencies with Go's nanosecond precision
// ("p50 318.767104ms, p99 683.441243ms"); they are now three significant digits, as the demo's.
func TestStatsLatencyReadable(t *testing.T) {
	got := latencyLine("persisted", forge.Latency{Calls: 5, P50: 318767104, P99: 7128735119})
	assert.Equal(t, "latency persisted: p50 318.8ms, p99 7.13s (5 calls)", got)
}

// TestHelpSaysWhereToStart: `forge --help` listed 30 commands and no first step; it now names the
// demo and the README's first calls, each a command that exists.
func TestHelpSaysWhereToStart(t *testing.T) {
	var stdout, stderr bytes.Buffer
	require.Equal(t, exitOK, run([]string{"--help"}, &stdout, &stderr), stderr.String())
	out := stdout.String()
	assert.Contains(t, out, "New here? Start with")
	for _, line := range []string{"forge demo", "forge role add -f examples/contracts/text.json", "forge call text upper s=hello --provider replay:cmd/forge/demo/cassette.jsonl"} {
		assert.Contains(t, out, "  "+line+"\n")
	}
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	assert.Contains(t, string(readme), "forge call text upper s=hello --provider replay:cmd/forge/demo/cassette.jsonl", "the help's first call is the README's")
}
