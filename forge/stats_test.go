package forge

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/provider"
)

func TestComputeStats(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	evs := []Event{
		{Time: t0.Add(-time.Hour), Role: "old", Method: "x", OK: true, ProgramSource: SourcePersisted}, // before --since
		{Time: t0, Role: "text", Method: "upper", OK: true, ProgramSource: SourceGenerated, ProviderCalls: 2, Tokens: provider.Usage{InputTokens: 300, OutputTokens: 100}, DurationNS: 900},
		{Time: t0, Role: "text", Method: "upper", OK: true, ProgramSource: SourcePersisted, DurationNS: 10},
		{Time: t0, Role: "text", Method: "upper", OK: true, ProgramSource: SourcePersisted, DurationNS: 20},
		{Time: t0, Role: "text", Method: "upper", OK: true, ProgramSource: SourceRepaired, ProviderCalls: 1, RepairAttempted: true, RepairSucceeded: true, DurationNS: 500},
		{Time: t0, Role: "text", Method: "lower", OK: false, FailureClass: "caller", FailureRule: "args"},
		{Time: t0, Role: "text", Method: "upper", Action: "edit", Reason: "operator", OK: true, ProgramSource: SourceRegenerated},
	}
	st := ComputeStats(evs, t0)
	o := st.Overall
	assert.Equal(t, int64(5), o.Calls)
	assert.Equal(t, int64(4), o.OK)
	assert.Equal(t, int64(1), o.OperatorActions)
	assert.Equal(t, int64(2), o.Persisted)
	assert.InDelta(t, 0.4, o.ReuseHitRate, 1e-9)
	assert.Equal(t, int64(3), o.ProviderCalls)
	assert.InDelta(t, 600, o.ModelCallsPer1000, 1e-9)
	assert.Equal(t, int64(2), o.ProviderCallsSaved)
	assert.Equal(t, int64(267), o.TokensSavedEstimate, "400 tokens over 3 asking calls, times 2 reused")
	assert.InDelta(t, 1.0, o.RepairSuccessRate, 1e-9)
	assert.Equal(t, map[string]int64{"caller/args": 1}, o.Failures)
	assert.Equal(t, Latency{Calls: 2, P50: 10, P99: 20}, o.Latency[SourcePersisted])
	require.Len(t, st.Methods, 2)
	assert.Equal(t, "lower", st.Methods[0].Method)
	assert.Equal(t, int64(4), st.Methods[1].Calls)
}

func TestForgeStatsFromTheLog(t *testing.T) {
	store := t.TempDir()
	p := cassette(t, line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK})
	f := openForge(t, store, p)
	require.NoError(t, f.AddRole(textContract()))
	for i := 0; i < 10; i++ {
		require.True(t, f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`)).OK)
	}
	st, err := f.Stats(time.Time{})
	require.NoError(t, err)
	assert.Equal(t, int64(10), st.Overall.Calls)
	assert.Equal(t, int64(9), st.Overall.Persisted)
	assert.Equal(t, p.n.Load(), st.Overall.ProviderCalls)
	assert.InDelta(t, 100, st.Overall.ModelCallsPer1000, 1e-9)
}

func TestParseAge(t *testing.T) {
	for s, want := range map[string]time.Duration{"24h": 24 * time.Hour, "7d": 7 * 24 * time.Hour, "0d": 0, "0s": 0, " 90m ": 90 * time.Minute} {
		d, err := ParseAge(s)
		assert.NoError(t, err, s)
		assert.Equal(t, want, d, s)
	}
	for _, s := range []string{"", "-1h", "-2d", "week", "1.5d", "99999999999999d"} {
		_, err := ParseAge(s)
		assert.Error(t, err, s)
	}
}
