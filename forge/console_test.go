package forge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/registry"
)

func TestRowOf(t *testing.T) {
	used := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rec := &registry.RoleRecord{Fingerprint: "fp"}
	for _, tc := range []struct {
		name string
		in   Listed
		want ArtifactRow
	}{
		{"healthy", Listed{Summary: registry.Summary{Role: "r", Method: "m", Lifecycle: registry.Durable, Generation: 3, Trigger: "initial_forge",
			ContractFingerprint: "fp", LastUsedAt: &used, Counters: registry.Counters{SuccessCount: 9}}, Contract: rec},
			ArtifactRow{Role: "r", Method: "m", Lifecycle: "durable", Generation: 3, Trigger: "initial_forge", Calls: 9, LastUsed: &used, ContractCurrent: true}},
		{"failing, stale contract", Listed{Summary: registry.Summary{Role: "r", Method: "m", Lifecycle: registry.Candidate, ContractFingerprint: "old",
			LastFailureClass: "intrinsic", Counters: registry.Counters{SuccessCount: 3, FailureCount: 1, RecentFailureRate: 0.5}}, Contract: rec},
			ArtifactRow{Role: "r", Method: "m", Lifecycle: "candidate", Calls: 4, Failures: 1, FailureRate: 0.25, RecentFailureRate: 0.5, LastFailureClass: "intrinsic"}},
		{"never called", Listed{Summary: registry.Summary{Role: "r", Method: "m", Lifecycle: registry.Candidate}},
			ArtifactRow{Role: "r", Method: "m", Lifecycle: "candidate"}},
		{"unreadable", Listed{Summary: registry.Summary{Role: "r", Method: "m", Err: errors.New("damaged")}},
			ArtifactRow{Role: "r", Method: "m", Error: "damaged"}},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, RowOf(&tc.in)) })
	}
}

func TestArtifactTable(t *testing.T) {
	t1, t2 := time.Unix(100, 0), time.Unix(200, 0)
	rows := []ArtifactRow{
		{Role: "b", Method: "x", Lifecycle: "durable", Calls: 10, Failures: 1, FailureRate: 0.1, LastUsed: &t2},
		{Role: "a", Method: "y", Lifecycle: "quarantined", Calls: 5, Failures: 5, FailureRate: 1, LastUsed: &t1},
		{Role: "a", Method: "x", Lifecycle: "candidate", Calls: 10},
		{Role: "c", Method: "z", Error: "damaged"},
	}
	names := func(p TablePage) (out []string) {
		for _, r := range p.Rows {
			out = append(out, r.Role+"."+r.Method)
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		q     TableQuery
		want  []string
		total int
	}{
		{"default: by name", TableQuery{}, []string{"a.x", "a.y", "b.x", "c.z"}, 4},
		{"calls desc, ties by name ascending", TableQuery{Sort: "calls", Desc: true}, []string{"a.x", "b.x", "a.y", "c.z"}, 4},
		{"failure rate", TableQuery{Sort: "failure_rate", Desc: true}, []string{"a.y", "b.x", "a.x", "c.z"}, 4},
		{"last used: never first", TableQuery{Sort: "last_used"}, []string{"a.x", "c.z", "a.y", "b.x"}, 4},
		{"lifecycle filter", TableQuery{Lifecycle: "quarantined"}, []string{"a.y"}, 1},
		{"unreadable filter", TableQuery{Lifecycle: "unreadable"}, []string{"c.z"}, 1},
		{"search is case-insensitive over role.method", TableQuery{Search: "A.X"}, []string{"a.x"}, 1},
		{"paged", TableQuery{Offset: 1, Limit: 2}, []string{"a.y", "b.x"}, 4},
		{"past the end", TableQuery{Offset: 9}, nil, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ArtifactTable(rows, tc.q)
			require.NoError(t, err)
			assert.Equal(t, tc.want, names(p))
			assert.Equal(t, tc.total, p.Total)
			assert.Equal(t, 4, p.All)
			assert.Equal(t, map[string]int{"durable": 1, "quarantined": 1, "candidate": 1, "unreadable": 1}, p.Lifecycles)
		})
	}
	p, err := ArtifactTable(rows, TableQuery{Limit: 5000})
	require.NoError(t, err)
	assert.Equal(t, MaxTableLimit, p.Limit)
	_, err = ArtifactTable(rows, TableQuery{Sort: "colour"})
	assert.ErrorContains(t, err, "use one of name, lifecycle")
	_, err = ArtifactTable(rows, TableQuery{Offset: -1})
	assert.Error(t, err)
	assert.Equal(t, "b", rows[0].Role, "the caller's rows are not reordered")
}

func TestComputeActivity(t *testing.T) {
	from := time.Unix(1000, 0)
	at := func(s int) time.Time { return from.Add(time.Duration(s) * time.Second) }
	evs := []Event{
		{Time: at(-1), Role: "r", Method: "m", OK: false, FailureClass: "intrinsic"},                                       // before the range
		{Time: at(0), Role: "r", Method: "m", OK: true, ProviderCalls: 1, ProgramSource: SourceGenerated},                  // bucket 0
		{Time: at(15), Role: "r", Method: "m", Kind: EventAggregate, Count: 7, OK: true},                                   // bucket 1
		{Time: at(20), Role: "r", Method: "m", OK: false, FailureClass: "intrinsic", FailureRule: "panic", ArtifactGen: 1}, // bucket 2
		{Time: at(25), Role: "r", Method: "m", OK: true, RepairAttempted: true, RepairSucceeded: true, ProviderCalls: 1},
		{Time: at(29), Role: "r", Method: "m", OK: false, FailureClass: "caller", FailureRule: "args"},
		{Time: at(29), Role: "r", Method: "m", OK: true, Action: OpBless, Reason: "operator"}, // not a call
		{Time: at(29), Role: "r", Method: "other", OK: false, FailureClass: "intrinsic"},      // another method
		{Time: at(30), Role: "r", Method: "m", OK: false, FailureClass: "intrinsic"},          // at the end: out
		{Time: at(10), Kind: EventDropped, Role: "r", Method: "m"},
	}
	a := ComputeActivity(evs, "r", "m", from, at(30), 3, 1)
	assert.Equal(t, 10*time.Second, a.Step)
	require.Len(t, a.Timeline, 3)
	assert.Equal(t, TimePoint{Start: at(0), Calls: 1, ProviderCalls: 1}, a.Timeline[0])
	assert.Equal(t, TimePoint{Start: at(10), Calls: 7}, a.Timeline[1])
	assert.Equal(t, TimePoint{Start: at(20), Calls: 3, Failures: 2, ProviderCalls: 1, Repairs: 1}, a.Timeline[2])
	require.Len(t, a.Failures, 1, "the newest only")
	assert.Equal(t, FailureLine{Time: at(29), Class: "caller", Rule: "args"}, a.Failures[0])

	all := ComputeActivity(evs, "r", "m", from, at(30), 0, 10)
	require.Len(t, all.Timeline, 1, "at least one bucket")
	assert.Equal(t, int64(11), all.Timeline[0].Calls)
	assert.Equal(t, []string{"caller", "intrinsic"}, []string{all.Failures[0].Class, all.Failures[1].Class}, "newest first")
	assert.Len(t, ComputeActivity(nil, "r", "m", from, from, 10, 5).Timeline, 10, "an empty range still has its buckets")
}

// BenchmarkArtifactTable: one page sorted by calls over 10,000 rows, against copying the rows
// (the least any page over them costs): go test -run '^$' -bench BenchmarkArtifactTable ./forge
func BenchmarkArtifactTable(b *testing.B) {
	rows := make([]ArtifactRow, 10000)
	for i := range rows {
		rows[i] = ArtifactRow{Role: "bulk", Method: fmt.Sprintf("m%05d", i), Lifecycle: "durable", Calls: int64(i % 97)}
	}
	b.Run("page=100,sort=calls", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := ArtifactTable(rows, TableQuery{Sort: "calls", Desc: true}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("baseline=copy", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = slices.Clone(rows)
		}
	})
}

// BenchmarkActivityOfLargeLog: one artifact's activity from a 16 MiB event log of 100 roles (the
// size at which the log rotates): only the artifact's own lines are decoded.
//
//	go test ./forge -run '^$' -bench BenchmarkActivityOfLargeLog -benchmem -count 5
func BenchmarkActivityOfLargeLog(b *testing.B) {
	f := openForge(b, b.TempDir(), cassette(b, line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK}))
	require.NoError(b, f.AddRole(textContract()))
	require.True(b, f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`)).OK)
	f.events.sync()
	writeLargeLog(b, f.Store().LocalDir())
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		a, err := f.Activity("text", "upper", 24*time.Hour, 48, 10)
		require.NoError(b, err)
		require.NotZero(b, a.Timeline[len(a.Timeline)-1].Calls)
	}
}

// writeLargeLog writes a rotated event log file of 16 MiB (the size at which the log rotates):
// calls of 100 roles, one in 100 of text.upper, one in 7 failed.
func writeLargeLog(b *testing.B, store string) {
	var buf []byte
	now := time.Now()
	for i := 0; len(buf) < 16<<20; i++ {
		e := Event{Time: now.Add(-time.Duration(i) * time.Second), Role: fmt.Sprintf("role%d", i%100), Method: "m", OK: i%7 != 0, DurationNS: 5000,
			ProgramSource: SourcePersisted, ArtifactGen: 1, FailureType: "panic", FailureClass: "intrinsic", FailureRule: "panic"}
		if i%100 == 0 {
			e.Role, e.Method = "text", "upper"
		}
		buf = append(appendEvent(buf, &e), '\n')
	}
	require.NoError(b, os.WriteFile(filepath.Join(store, "events", "forge.jsonl.1"), buf, 0o644))
}

// BenchmarkStatsOfLargeLog: stats over a 16 MiB event log, summarised as it is read.
//
//	go test ./forge -run '^$' -bench BenchmarkStatsOfLargeLog -benchmem -count 5
func BenchmarkStatsOfLargeLog(b *testing.B) {
	f := openForge(b, b.TempDir(), nil)
	require.NoError(b, f.AddRole(textContract()))
	f.events.sync()
	writeLargeLog(b, f.Store().LocalDir())
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		st, err := f.Stats(time.Time{})
		require.NoError(b, err)
		require.Greater(b, st.Overall.Calls, int64(20_000))
	}
}
