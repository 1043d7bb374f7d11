package nats

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/registry"
)

// The fleet's merged metrics keep each generation's window apart, the most recently recorded
// first and at most MaxGenWindows of them; a view of a record takes its own generation's outcomes
// since its base, whatever was merged in between, and the sums of every generation.
func TestMetricsKeepGenerationsApart(t *testing.T) {
	var m Metrics
	gen := func(g int, recent string) Delta {
		d := Delta{Counters: registry.Counters{Recent: recent}, Calls: int64(len(recent)), Gen: g, GenCalls: int64(len(recent))}
		for _, l := range recent {
			if l == 's' {
				d.Counters.SuccessCount++
			} else {
				d.Counters.FailureCount++
				d.Counters.IntrinsicFailureCount++
				d.GenFailures++
				d.LastFailureClass, d.LastFailureReason = "intrinsic", "gen "+string(rune('0'+g))
			}
		}
		return d
	}
	m.Add(gen(1, "ssi"))
	rec := &registry.Artifact{Generation: 2, Lifecycle: registry.Candidate}
	base := baseOf(&m) // gen 2 written (promoted) with the metrics as they were
	for _, g := range base.Gens {
		assert.Empty(t, g.Recent, "a base keeps counts, not windows")
	}
	m.Add(gen(2, "s"))
	m.Add(gen(1, "i")) // a call still running gen 1
	m.Add(gen(2, "s"))
	v := view(rec, base, &m)
	assert.Equal(t, "ss", v.Recent)
	assert.Empty(t, v.LastFailureClass)
	assert.Equal(t, int64(2), v.SuccessCount, "the sums since the base, every generation's")
	assert.Equal(t, int64(1), v.IntrinsicFailureCount)
	assert.Equal(t, registry.Candidate, v.Lifecycle)
	m.Add(gen(2, "si"))
	v = view(rec, base, &m)
	assert.Equal(t, "sssi", v.Recent)
	assert.Equal(t, "intrinsic", v.LastFailureClass)
	assert.Equal(t, "gen 2", v.LastFailureReason)
	// A record of gen 1 (a view not yet replaced) sees gen 1's outcomes since its base only.
	old := view(&registry.Artifact{Generation: 1}, base, &m)
	assert.Equal(t, "i", old.Recent)

	m.Add(gen(3, "s"))
	m.Add(gen(4, "s"))
	require.Len(t, m.Gens, MaxGenWindows)
	var gens []int
	for _, g := range m.Gens {
		gens = append(gens, g.Gen)
	}
	assert.Equal(t, []int{4, 3, 2}, gens, "most recently recorded first; gen 1 dropped")
	m.Add(gen(2, strings.Repeat("s", 30)))
	assert.Len(t, genOf(m.Gens, 2).Recent, registry.RecentWindow)
	assert.Equal(t, 2, m.Gens[0].Gen)
}

// Metrics written before outcomes carried their generation (no Gens) are viewed as they were:
// the tail of the whole window as long as the calls since the base.
func TestMetricsWithoutGenerationsViewAsBefore(t *testing.T) {
	m := Metrics{Counters: registry.Counters{SuccessCount: 4, FailureCount: 1, CallerFailureCount: 1, Recent: "sscss"}, Calls: 5,
		LastFailureClass: "caller", LastFailureReason: "bad args", LastUsedAt: new(time.Time)}
	base := Metrics{Counters: registry.Counters{SuccessCount: 2, Recent: "ss"}, Calls: 2}
	v := view(&registry.Artifact{Generation: 3, Lifecycle: registry.Candidate}, &base, &m)
	assert.Equal(t, "css", v.Recent)
	assert.Equal(t, "caller", v.LastFailureClass)
	assert.Equal(t, int64(2), v.SuccessCount)
}
