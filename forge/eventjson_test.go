package forge

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/provider"
)

func TestAppendEventMatchesEncodingJSON(t *testing.T) {
	full := Event{Time: time.Date(2026, 11, 25, 23, 1, 2, 345678901, time.UTC), TraceID: 0xabc, CallID: 0xfedcba9876543210, ParentCallID: 7,
		Depth: 2, Role: "text", Method: "upper", OK: true, Action: "execute", Reason: "healthy", ProgramSource: "persisted",
		ArtifactHit: true, ArtifactGen: 3, GenerationTrigger: "repair:intrinsic", PromptVersion: "pv", ContractFingerprint: "sha256:00",
		SuccessCount: 10, FailureCount: 2, IntrinsicFailureCount: 1, AdaptiveFailureCount: 1, ExtrinsicFailureCount: -1,
		FailureType: "panic", FailureClass: "intrinsic", FailureRule: `odd "rule" <&> é \n`, RepairAttempted: true, RepairSucceeded: true,
		ProviderCalls: 3, Tokens: provider.Usage{InputTokens: 100, CachedTokens: 50}, PromptTokensEstimate: 97, DurationNS: 12345, SandboxNS: 678, EventsDropped: 9}
	op := Event{Time: full.Time, TraceID: 1, CallID: 1, Role: "text", Method: "upper", OK: true, Action: OpBless, Reason: "operator",
		ArtifactGen: 2, Who: "cli:ann é", ArtifactGenBefore: 2, LifecycleBefore: "candidate", Lifecycle: "blessed", Detail: "--reset-metrics"}
	agg := Event{Time: full.Time, TraceID: 5, CallID: 6, Role: "text", Method: "upper", OK: true, Action: "execute", Reason: "healthy",
		ProgramSource: SourcePersisted, ArtifactHit: true, ArtifactGen: 2, DurationNS: 123456789, SandboxNS: 1234, Kind: EventAggregate, Count: 150000,
		FirstTime: full.Time.Add(-time.Second), DurationP50NS: 6500, DurationP99NS: 21000, DurationMaxNS: 480000, DurationHist: []int64{98, 140000, 120, 10000}}
	dropped := Event{Time: full.Time, Kind: EventDropped, EventsDropped: 12, Dropped: map[string]int64{"call": 10, "aggregate": 2}, Lost: map[string]int64{"failure": 1}}
	for name, e := range map[string]Event{"zero": {}, "full": full, "no tokens": {Role: "r", Tokens: provider.Usage{OutputTokens: 1}},
		"aggregate": agg, "dropped": dropped, "operator": op} {
		t.Run(name, func(t *testing.T) {
			got := appendEvent(nil, &e)
			want, err := json.Marshal(e)
			require.NoError(t, err)
			if e.Kind == "" {
				assert.JSONEq(t, string(want), string(got))
			} else { // compact: encoding/json's document less the zero per-call fields
				var g, w map[string]any
				require.NoError(t, json.Unmarshal(got, &g))
				require.NoError(t, json.Unmarshal(want, &w))
				for k, v := range w {
					if gv, ok := g[k]; ok {
						assert.Equal(t, v, gv, k)
					} else {
						assert.Contains(t, []any{"", false, float64(0), map[string]any{}}, v, "%s left out but not zero", k)
					}
				}
				assert.Less(t, len(got), len(want))
			}
			var back Event
			require.NoError(t, json.Unmarshal(got, &back))
			assert.Equal(t, e, back)
		})
	}
}

func BenchmarkAppendEvent(b *testing.B) {
	e := Event{Time: time.Now(), TraceID: 1, CallID: 1, Role: "text", Method: "upper", OK: true, Action: "execute", Reason: "healthy",
		ProgramSource: "persisted", ArtifactHit: true, ArtifactGen: 1, PromptVersion: PromptVersion, ContractFingerprint: "sha256:0123456789abcdef"}
	var buf []byte
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf = appendEvent(buf[:0], &e)
	}
}

func BenchmarkEncodingJSONEvent(b *testing.B) {
	e := Event{Time: time.Now(), TraceID: 1, CallID: 1, Role: "text", Method: "upper", OK: true, Action: "execute", Reason: "healthy",
		ProgramSource: "persisted", ArtifactHit: true, ArtifactGen: 1, PromptVersion: PromptVersion, ContractFingerprint: "sha256:0123456789abcdef"}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_, _ = json.Marshal(e)
	}
}

func TestEventLogRotates(t *testing.T) {
	dir := t.TempDir()
	l, err := openEventLog(dir, 2000, false, 0)
	require.NoError(t, err)
	for i := 0; i < 40; i++ { // ~400 bytes each: rotates every ~5 events
		l.emit(&Event{Role: "text", Method: "upper", CallID: ID(i + 1), Action: "execute", Reason: "healthy"})
		l.sync()
	}
	l.close()
	names, err := filepath.Glob(filepath.Join(dir, "forge.jsonl*"))
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"forge.jsonl", "forge.jsonl.1", "forge.jsonl.2", "forge.jsonl.3"}, baseNames(names),
		"the current log and %d rotated ones", eventLogKeep)
	for _, n := range names {
		st, err := os.Stat(n)
		require.NoError(t, err)
		assert.LessOrEqual(t, st.Size(), int64(2000+600), n)
	}
	data, err := os.ReadFile(filepath.Join(dir, "forge.jsonl.1"))
	require.NoError(t, err)
	var e Event
	require.NoError(t, json.Unmarshal(data[:bytes.IndexByte(data, '\n')], &e), "rotated files hold whole lines")
}

func baseNames(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.Base(p)
	}
	return out
}
