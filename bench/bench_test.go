package bench

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// small is a run small enough for a unit test: yaegi in-process, a dozen methods.
func small(mod ...func(*Config)) Config {
	c := Config{Methods: 12, Roles: 3, Backend: "yaegi", Concurrency: 2, Calls: 240, BaselineCalls: 60, GenericPct: 20}
	for _, m := range mod {
		m(&c)
	}
	return c
}

func TestRunBuildsTheStoreAndReportsSaneFigures(t *testing.T) {
	var phases []string
	cfg := small(func(c *Config) {
		c.Progress = func(phase string, done, total int64) {
			if len(phases) == 0 || phases[len(phases)-1] != phase {
				phases = append(phases, phase)
			}
		}
	})
	rep, err := Run(context.Background(), cfg)
	require.NoError(t, err)
	require.Empty(t, rep.Aborted)

	assert.Equal(t, 3, rep.Store.Roles)
	assert.Equal(t, 12, rep.Store.Artifacts)
	assert.Positive(t, rep.Store.WritesPerSec)
	assert.Positive(t, rep.Store.Bytes)
	assert.LessOrEqual(t, rep.Store.WriteP50, rep.Store.WriteP99)
	_, err = os.Stat(rep.Store.Dir)
	assert.True(t, errors.Is(err, os.ErrNotExist), "the temporary store is removed after the run: %v", err)

	sane := func(name string, l Latency, calls int64, distinct int) {
		t.Helper()
		assert.Equal(t, calls, l.Calls, name)
		assert.Zero(t, l.Failures, "%s: %s", name, l.FirstError)
		assert.Zero(t, l.WrongAnswers, "%s: %s", name, l.FirstError)
		assert.Equal(t, distinct, l.Distinct, name)
		assert.Positive(t, l.P50, name)
		assert.LessOrEqual(t, l.P50, l.P99, name)
		assert.LessOrEqual(t, l.P99, l.Max, name)
		assert.Positive(t, l.CallsPerSec, name)
	}
	sane("cold", rep.Cold, 12, 12)
	require.NotNil(t, rep.Baseline)
	// 60 calls in runs of 20: methods 0, 1 and 2 of the round-robin, 19 timed calls each.
	sane("baseline", *rep.Baseline, 57, 3)
	sane("warm", rep.Warm, 240, 12)
	assert.Positive(t, rep.WarmVsBaseline)

	m := rep.Memory
	assert.Positive(t, m.RSS)
	assert.GreaterOrEqual(t, m.HWM, m.RSS)
	assert.Positive(t, m.HeapInuse)
	assert.Positive(t, m.Goroutines)
	assert.Positive(t, m.LivePrograms)
	assert.LessOrEqual(t, m.LivePrograms, 12)
	assert.Positive(t, rep.Events.BytesPerCall, "every warm call leaves an event (or an aggregate of them)")

	require.Len(t, rep.Flush, 1)
	assert.Equal(t, FlushCost{Touched: 12, Merged: 12, Time: rep.Flush[0].Time}, rep.Flush[0])
	assert.Positive(t, rep.Flush[0].Time)
	assert.Nil(t, rep.Process)
	assert.Equal(t, []string{"store", "cold", "baseline (each method alone)", "warm (round-robin)"}, phases)
	assert.Equal(t, "yaegi", rep.Placement)
}

func TestPatternsAndDuration(t *testing.T) {
	rep, err := Run(context.Background(), small(func(c *Config) { c.Pattern = PatternOne; c.BaselineCalls = -1 }))
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Warm.Distinct)
	assert.Nil(t, rep.Baseline)

	rep, err = Run(context.Background(), small(func(c *Config) { c.Pattern = PatternZipf; c.Methods = 40; c.Calls = 400 }))
	require.NoError(t, err)
	assert.Equal(t, int64(400), rep.Warm.Calls)
	assert.Zero(t, rep.Warm.Failures, rep.Warm.FirstError)
	assert.Greater(t, rep.Warm.Distinct, 1)
	assert.Less(t, rep.Warm.Distinct, 40, "zipf over 400 calls leaves some of 40 methods cold")

	rep, err = Run(context.Background(), small(func(c *Config) { c.Duration = 200 * time.Millisecond; c.Calls = 0 }))
	require.NoError(t, err)
	assert.Positive(t, rep.Warm.Calls)
	assert.GreaterOrEqual(t, rep.Warm.Seconds, 0.2)
	assert.Less(t, rep.Warm.Seconds, 60.0, "a timed phase ends (bound only against hangs)")
}

func TestRunKeepsAGivenStoreAndRefusesOneInUse(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	rep, err := Run(context.Background(), small(func(c *Config) { c.Store = dir; c.Calls = 24; c.BaselineCalls = -1; c.Generations = 3 }))
	require.NoError(t, err)
	assert.True(t, rep.Store.Kept)
	ents, err := os.ReadDir(filepath.Join(dir, "tools", "r0000"))
	require.NoError(t, err)
	assert.NotEmpty(t, ents)
	data, err := os.ReadFile(filepath.Join(dir, "tools", "r0000", "m00000.json"))
	require.NoError(t, err)
	var a struct {
		Lifecycle string            `json:"lifecycle"`
		History   []json.RawMessage `json:"history"`
	}
	require.NoError(t, json.Unmarshal(data, &a))
	assert.Equal(t, "durable", a.Lifecycle)
	assert.Len(t, a.History, 3)

	_, err = Run(context.Background(), small(func(c *Config) { c.Store = dir }))
	var ce ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Contains(t, err.Error(), "not empty")
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []Config{
		{Methods: 0},
		{Methods: 5, Roles: 6},
		{Methods: 5, Backend: "lua"},
		{Methods: 5, Pattern: "random"},
		{Methods: 5, GenericPct: 101},
		{Methods: 5, Generations: 4},
		{Methods: 5, ProcessRuns: 2},
	} {
		_, err := Run(context.Background(), c)
		var ce ConfigError
		assert.ErrorAs(t, err, &ce, "%+v", c)
	}
}

func TestRunStopsAtMaxRSS(t *testing.T) {
	if raceEnabled {
		t.Skip("stopping calls in flight trips yaegi v0.16.1's upstream data race (see raceEnabled)")
	}
	rep, err := Run(context.Background(), small(func(c *Config) { c.MaxRSS = 1 << 20; c.Duration = time.Minute; c.Calls = 0 }))
	require.NoError(t, err)
	assert.Contains(t, rep.Aborted, "--max-rss")
}

func TestMethodsAreDistinctAndTheirAnswersKnown(t *testing.T) {
	ms := makeMethods(300, 7, 10)
	code := map[string]bool{}
	kinds := map[string]int{}
	for _, m := range ms {
		assert.False(t, code[m.Code], "%s: the same code as another method", m.Name)
		code[m.Code] = true
		kinds[m.Kind]++
		assert.True(t, json.Valid(m.Args) && json.Valid(m.Want), m.Name)
		assert.NotEqual(t, m.Code, m.Older, m.Name)
		assert.True(t, strings.HasPrefix(m.Code, "package artifact\n"), m.Name)
	}
	assert.Equal(t, 30, kinds[kindSlices])
	for _, k := range []string{kindArith, kindLoop, kindString} {
		assert.Greater(t, kinds[k], 50, k)
	}
}

func TestPct(t *testing.T) {
	var l []time.Duration
	for i := 1; i <= 100; i++ {
		l = append(l, time.Duration(i))
	}
	assert.Equal(t, time.Duration(50), pct(l, 50))
	assert.Equal(t, time.Duration(99), pct(l, 99))
	assert.Equal(t, time.Duration(1), pct(l[:1], 99))
	assert.Zero(t, pct(nil, 50))
}

func TestRegensReplaceTheCodeAndReportMemory(t *testing.T) {
	rep, err := Run(context.Background(), small(func(c *Config) { c.Regens = 3; c.Calls = 24; c.BaselineCalls = -1 }))
	require.NoError(t, err)
	require.NotNil(t, rep.Regen)
	g := rep.Regen
	assert.Equal(t, 3, g.Count)
	assert.Zero(t, g.Failures, g.FirstError)
	assert.Positive(t, g.EditP50)
	assert.Positive(t, g.RSSBefore)
	assert.Positive(t, g.RSSAfter)
	assert.Positive(t, g.LiveAfter)
	assert.InDelta(t, float64(g.RSSAfter)/float64(g.RSSBefore)-1, g.Growth, 1e-9)
}

func TestBaselineRuns(t *testing.T) {
	var got []int
	next := inRuns(picker(PatternRoundRobin, 4), 3, 2)(nil)
	for seq := range int64(6) {
		got = append(got, next(seq))
	}
	// Negative: the untimed first call of a run (-1-idx); the order is the pattern's (0, 1, 2).
	assert.Equal(t, []int{-1, 0, -2, 1, -3, 2}, got)

	zipf := inRuns(picker(PatternZipf, 50), 100, 5)
	a, b := zipf(nil), zipf(nil)
	for seq := range int64(500) {
		require.Equal(t, a(seq), b(seq), "every goroutine follows the same order")
	}
}

// TestBackendsAreTheRegisteredOnes: --backend takes what the registered backends say they are,
// and a refusal lists them.
func TestBackendsAreTheRegisteredOnes(t *testing.T) {
	tests := []struct {
		backend, sandbox, isolation string
		ok                          bool
	}{
		{BackendDefault, "", "", true},
		{"wasm", "wasm", "", true},
		{"yaegi", "yaegi", "", true},
		{"yaegi-process", "yaegi", "process", true},
		{"native", "native", "", true},
		{"wasm-process", "", "", false},
		{"lua", "", "", false},
	}
	for _, tc := range tests {
		sb, limits, ok := placementOf(tc.backend)
		assert.Equal(t, tc.ok, ok, tc.backend)
		assert.Equal(t, tc.sandbox, sb, tc.backend)
		if tc.isolation != "" {
			require.NotNil(t, limits, tc.backend)
			assert.Equal(t, tc.isolation, limits.Isolation)
		} else {
			assert.Nil(t, limits, tc.backend)
		}
	}
	assert.Equal(t, "native, wasm, yaegi, yaegi-process, default", BackendChoices())
	err := (&Config{Methods: 1, Backend: "lua"}).normalize()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "use native, wasm, yaegi, yaegi-process, default")
}
