package forge

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// `forge stats` on the HumanEval-X replay scenario: the figures computed from its events match
// the counts the scenario itself keeps.
func TestStatsMatchHumanEvalScenario(t *testing.T) {
	rep := humanEvalScenario(t)
	st := ComputeStats(rep.events, time.Time{})
	o := st.Overall
	repairCalls := 0
	for _, r := range heRepairs {
		repairCalls += len(r.calls)
	}
	calls := int64(rep.problems + repairCalls + rep.examples)
	assert.Equal(t, calls, o.Calls)
	assert.Equal(t, int64(rep.provider), o.ProviderCalls)
	assert.Equal(t, int64(rep.forged), o.Generated, "every forged problem's first call generated its code")
	assert.Equal(t, int64(len(rep.repaired)), o.Repaired)
	assert.Equal(t, int64(len(rep.regen)), o.Regenerated)
	assert.Equal(t, calls-int64(len(rep.failed)), o.OK)
	assert.Equal(t, calls-int64(rep.forged+len(rep.repaired)+len(rep.regen)+len(rep.failed)), o.Persisted)
	var failed int64
	for k, n := range o.Failures {
		assert.Contains(t, k, "intrinsic/", "the scenario's only failures are code that never passed the gate")
		failed += n
	}
	assert.Equal(t, int64(len(rep.failed)), failed)
	assert.InDelta(t, 1000*float64(rep.provider)/float64(calls), o.ModelCallsPer1000, 1e-9)
	t.Logf("HumanEval-X replay: %d calls, reuse hit rate %.1f%%, %.1f model calls per 1,000 calls, %d provider calls, %d saved; "+
		"repairs %d (%.0f%% succeeded), regeneration rate %.2f%%; failures %v; p50 persisted %v, p99 %v; p50 generated %v",
		o.Calls, 100*o.ReuseHitRate, o.ModelCallsPer1000, o.ProviderCalls, o.ProviderCallsSaved, o.RepairsAttempted,
		100*o.RepairSuccessRate, 100*o.RegenerationRate, o.Failures, o.Latency[SourcePersisted].P50, o.Latency[SourcePersisted].P99,
		o.Latency[SourceGenerated].P50)
}
