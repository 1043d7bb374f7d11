package forge

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 22 item 8: call volume cannot erase the records that matter. Failing calls that rotate
// forge.jsonl past its kept files leave the generation and the operator action in
// events/records.jsonl.
func TestCallVolumeCannotEraseRecords(t *testing.T) {
	store := t.TempDir()
	l, file, err := newEventLog(filepath.Join(store, "events"), 4096, 64)
	require.NoError(t, err)
	go l.run(file)
	l.emit(&Event{Role: "text", Method: "upper", CallID: 1, OK: true, Action: "generate", Reason: "missing", ProgramSource: SourceGenerated,
		GenerationTrigger: "initial_forge", ArtifactGen: 1, ProviderCalls: 1})
	l.emit(&Event{Role: "text", Method: "upper", CallID: 2, OK: true, Action: OpBless, Reason: reasonOperator, Who: "cli:ops", ArtifactGen: 1})
	for i := range 2000 { // own lines: failures of the code, a caller could cause them at will
		l.emit(&Event{Role: "text", Method: "upper", CallID: ID(i + 10), Action: "execute", Reason: "healthy", ProgramSource: SourcePersisted,
			FailureType: "panic", FailureClass: "intrinsic", FailureRule: "panic", ArtifactGen: 1})
	}
	l.close()

	evs, err := ReadEvents(store)
	require.NoError(t, err)
	for _, e := range evs {
		require.NotEqual(t, ID(1), e.CallID, "the generation rotated out of forge.jsonl (this test's premise)")
	}
	recs, err := ReadRecords(store)
	require.NoError(t, err)
	var ids []ID
	for _, e := range recs {
		ids = append(ids, e.CallID)
	}
	assert.Equal(t, []ID{1, 2}, ids, "records.jsonl holds the generation and the operator action, and no call noise")

	// Leftover 3c: stats (forge stats, /v1/stats, forge_stats) count them too, once each.
	st, err := StoreStats(store, time.Time{})
	require.NoError(t, err)
	assert.EqualValues(t, 1, st.Overall.Generated, "the generation the log rotated away is counted")
	assert.EqualValues(t, 1, st.Overall.ProviderCalls)
	assert.EqualValues(t, 1, st.Overall.OperatorActions, "the bless the log rotated away is counted")
	assert.EqualValues(t, 2, st.RecordsOnly)
	assert.Equal(t, evs[0].Time, st.LogSince)
	assert.EqualValues(t, len(evs), st.Overall.Calls-1, "every call line of the log counts once, and the generation")
}

// Leftover 3c: a record still in the event log is counted once, not once per file.
func TestStatsCountEachRecordOnce(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	gen := Event{Time: t0, CallID: 1, Action: "generate", ProgramSource: SourceGenerated, ProviderCalls: 1}
	old := Event{Time: t0.Add(-time.Hour), CallID: 9, Action: "generate", ProgramSource: SourceGenerated, ProviderCalls: 1}
	warm := Event{Time: t0.Add(time.Second), CallID: 2, Action: "execute", ProgramSource: SourcePersisted, OK: true}
	for _, c := range []struct {
		name      string
		evs, recs []Event
		want      []ID // the lines counted
		only      int
		models    int
	}{
		{"no records", []Event{gen, warm}, nil, []ID{1, 2}, 0, 1},
		{"every record in the log", []Event{gen, warm}, []Event{gen}, []ID{1, 2}, 0, 1},
		{"one rotated away", []Event{gen, warm}, []Event{old, gen}, []ID{9, 1, 2}, 1, 2},
		{"the log rotated whole", nil, []Event{old, gen}, []ID{9, 1}, 2, 2},
		{"a non-record line of the same id is not the record", []Event{{Time: t0, CallID: 1, Action: "execute", ProgramSource: SourcePersisted}}, []Event{gen}, []ID{1, 1}, 1, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := t.TempDir()
			write := func(name string, evs []Event) {
				var b []byte
				for i := range evs {
					b = append(appendEvent(b, &evs[i]), '\n')
				}
				require.NoError(t, os.MkdirAll(filepath.Join(store, "events"), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(store, "events", name), b, 0o644))
			}
			write("forge.jsonl", c.evs)
			write(recordsFile, c.recs)
			st, err := StoreStats(store, time.Time{})
			require.NoError(t, err)
			assert.EqualValues(t, len(c.want), st.Overall.Calls, "each line once")
			assert.EqualValues(t, c.only, st.RecordsOnly)
			assert.EqualValues(t, c.models, st.Overall.ProviderCalls, "each generation once")
		})
	}
}

// Issue 22 item 8: calls to made-up roles and methods, and args refused before anything runs,
// are folded into aggregates as warm successes are: 3,000 such calls write a few lines, under
// one label for every made-up name, and stats still count each of them.
func TestUnknownRoleFailuresAreAggregated(t *testing.T) {
	store := t.TempDir()
	p := cassette(t, line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK})
	f := openForge(t, store, p)
	require.NoError(t, f.AddRole(textContract()))
	ctx := context.Background()
	require.True(t, f.Call(ctx, "text", "upper", json.RawMessage(`{"s":"a"}`)).OK)
	for i := range 1000 {
		require.False(t, f.Call(ctx, fmt.Sprintf("nope%d", i), "m", json.RawMessage(`{}`)).OK)
		require.False(t, f.Call(ctx, "text", fmt.Sprintf("made%d", i), json.RawMessage(`{}`)).OK)
		require.False(t, f.Call(ctx, "text", "upper", json.RawMessage(`{"s":1}`)).OK)
	}
	f.Flush()
	evs, err := ReadEvents(store)
	require.NoError(t, err)
	assert.LessOrEqual(t, len(evs), 20, "a few aggregate lines, not one per call")
	for _, e := range evs {
		assert.NotContains(t, e.Role, "nope", "a made-up role is no line or bucket of its own")
		assert.NotContains(t, e.Method, "made")
	}
	st := ComputeStats(evs, time.Time{})
	assert.Equal(t, int64(3001), st.Overall.Calls)
	assert.Equal(t, int64(3000), st.Overall.Failures["caller/args"])
}
