package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/bench"
)

func TestBenchJSON(t *testing.T) {
	code, stdout, stderr := runCLI(t, "bench", "--methods", "8", "--roles", "2", "--calls", "80", "--baseline-calls", "20", "--concurrency", "2", "--json")
	require.Equal(t, 0, code, stderr)
	var doc map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc), "one JSON document on stdout: %s", stdout)
	for _, k := range []string{"config", "host", "placement", "store", "cold", "baseline", "warm", "warm_p50_vs_baseline", "memory", "events", "forge_flush_ns", "flush"} {
		assert.Contains(t, doc, k)
	}
	assert.NotContains(t, doc, "process")
	var rep bench.Report
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep))
	assert.Equal(t, 8, rep.Store.Artifacts)
	assert.Equal(t, int64(8), rep.Cold.Calls)
	assert.Equal(t, int64(80), rep.Warm.Calls)
	assert.Zero(t, rep.Warm.Failures+rep.Warm.WrongAnswers, rep.Warm.FirstError)
	assert.LessOrEqual(t, rep.Warm.P50, rep.Warm.P99)
	assert.Positive(t, rep.Memory.RSS)
	assert.Empty(t, stderr, "no progress under --json")
}

func TestBenchTable(t *testing.T) {
	code, stdout, stderr := runCLI(t, "bench", "--methods", "5", "--calls", "50", "--pattern", "zipf", "-v")
	require.Equal(t, 0, code, stderr)
	for _, row := range []string{"store write cost", "cold (first call: compile)", "baseline (each method alone, 20 in a row)", "warm (zipf)", "RSS", "Go heap in use", "goroutines", "event log", "metrics flush, 5 touched"} {
		assert.Contains(t, stdout, row)
	}
	assert.Contains(t, stderr, "forge: bench: warm (zipf): done in", "-v tells the phases on stderr")
	assert.NotContains(t, stdout, "forge: bench:", "progress never reaches stdout")
}

func TestBenchUsage(t *testing.T) {
	for _, args := range [][]string{
		{"bench", "--pattern", "random"},
		{"bench", "--methods", "0"},
		{"bench", "--backend", "lua", "--json"},
	} {
		code, _, stderr := runCLI(t, args...)
		assert.Equal(t, exitUsage, code, "%v: %s", args, stderr)
	}
}

// TestBenchProcess times `forge call` as a whole process with a real forge binary.
func TestBenchProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds forge")
	}
	bin, err := forgeBinary()
	require.NoError(t, err)
	rep, err := bench.Run(context.Background(), bench.Config{Methods: 4, Calls: 20, BaselineCalls: -1, ProcessRuns: 3, Executable: bin})
	require.NoError(t, err)
	require.NotNil(t, rep.Process)
	p := rep.Process
	assert.Zero(t, p.Failures, p.FirstError)
	assert.Equal(t, 3, p.Runs)
	assert.Positive(t, p.CallP50)
	assert.Positive(t, p.VersionFlagP)
	assert.Positive(t, p.VersionP50)
	assert.Positive(t, p.Ratio)
	assert.Positive(t, p.LsP50)
}
