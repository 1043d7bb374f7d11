package selector

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	fpNow = "sha256:contract-now"
	fpOld = "sha256:contract-old"
)

// base is a healthy durable artifact written by this forge for the current contract.
func base() Input {
	return Input{
		Role: "text",
		Artifact: Artifact{
			SchemaVersion:       1,
			RuntimeVersion:      "1.4.2",
			Lifecycle:           Durable,
			ContractFingerprint: fpNow,
			PromptVersion:       "2026-01-01.v1",
			Health:              Health{Successes: 40},
		},
		Current: Current{
			SchemaVersion:       1,
			RuntimeVersion:      "1.5.0",
			ContractFingerprint: fpNow,
			PromptVersion:       "2026-01-01.v1",
		},
		RepairsLeft: 3,
	}
}

func with(mods ...func(*Input)) Input {
	in := base()
	for _, m := range mods {
		m(&in)
	}
	return in
}

var (
	missing      = func(in *Input) { in.Artifact = Artifact{Missing: true} }
	corrupt      = func(in *Input) { in.Artifact.Corrupt = true }
	stale        = func(in *Input) { in.Artifact.ContractFingerprint = fpOld }
	forced       = func(in *Input) { in.Artifact.ForcedRegeneration = true }
	spent        = func(in *Input) { in.RepairsLeft = 0 }
	repairOff    = func(in *Input) { in.Switches.RepairOff = true }
	readOff      = func(in *Input) { in.Switches.ReadPathOff = true }
	generateOnly = func(in *Input) { in.Switches.GenerateOnly = true }
	sickHealth   = func(in *Input) { in.Artifact.Health = Health{Successes: 2, IntrinsicFailures: 2, AdaptiveFailures: 1} }
	outageHealth = func(in *Input) { in.Artifact.Health = Health{Successes: 1, ExtrinsicFailures: 500} }
	lifecycle    = func(l Lifecycle) func(*Input) { return func(in *Input) { in.Artifact.Lifecycle = l } }
	runtime      = func(v string) func(*Input) { return func(in *Input) { in.Artifact.RuntimeVersion = v } }
	schema       = func(v int) func(*Input) { return func(in *Input) { in.Artifact.SchemaVersion = v } }
	canary       = func(roles ...string) func(*Input) { return func(in *Input) { in.Switches.Canary = roles } }
	prompt       = func(v string) func(*Input) { return func(in *Input) { in.Artifact.PromptVersion = v } }
)

func TestDecideNamedCases(t *testing.T) {
	cases := []struct {
		name  string
		in    Input
		want  string // "action:reason" and, in parentheses, the notes
		notes []Reason
	}{
		{"healthy durable", with(), "execute:healthy", nil},
		{"healthy candidate", with(lifecycle(Candidate)), "execute:healthy", nil},
		{"minor runtime release keeps the artifact", with(runtime("1.0.0")), "execute:healthy", nil},
		{"v-prefixed runtime", with(runtime("v1.9.9-rc.1")), "execute:healthy", nil},
		{"missing", with(missing), "generate:missing", nil},
		{"missing under generate-only notes the switch", with(missing, generateOnly), "generate:missing", []Reason{ReasonGenerateOnly}},
		{"corrupt", with(corrupt), "generate:corrupt", nil},
		{"corrupt blessed is not pinned", with(corrupt, lifecycle(Blessed)), "generate:corrupt", nil},
		{"unknown lifecycle is corrupt", with(lifecycle("zombie")), "generate:corrupt", nil},
		{"empty lifecycle is corrupt", with(lifecycle("")), "generate:corrupt", nil},
		{"incompatible schema", with(schema(2)), "regenerate:incompatible_schema", nil},
		{"incompatible runtime major", with(runtime("0.9.0")), "regenerate:incompatible_runtime", nil},
		{"unreadable runtime", with(runtime("dev")), "regenerate:incompatible_runtime", nil},
		{"schema beats runtime", with(schema(0), runtime("2.0.0")), "regenerate:incompatible_schema", []Reason{ReasonIncompatibleRuntime}},
		{"quarantined", with(lifecycle(Quarantined)), "refuse:quarantined", nil},
		{"quarantined beats the kill switches", with(lifecycle(Quarantined), readOff, generateOnly), "refuse:quarantined", []Reason{ReasonReadPathOff, ReasonGenerateOnly}},
		{"forced regen is the way out of quarantine", with(lifecycle(Quarantined), forced), "regenerate:forced", []Reason{ReasonQuarantined}},
		{"forced", with(forced), "regenerate:forced", nil},
		{"forced beats blessed", with(forced, lifecycle(Blessed)), "regenerate:forced", []Reason{ReasonBlessed}},
		{"forced beats incompatible", with(forced, schema(9)), "regenerate:forced", []Reason{ReasonIncompatibleSchema}},
		{"forced under read path off generates", with(forced, readOff), "generate:read_path_off", []Reason{ReasonForced}},
		{"stale repairs first", with(stale), "repair:stale_contract", nil},
		{"stale with repair off regenerates", with(stale, repairOff), "regenerate:repair_off", []Reason{ReasonStaleContract}},
		{"stale with budget spent regenerates", with(stale, spent), "regenerate:budget_exhausted", []Reason{ReasonStaleContract}},
		{"repair off names first", with(stale, spent, repairOff), "regenerate:repair_off", []Reason{ReasonStaleContract, ReasonBudgetExhausted}},
		{"negative budget is spent", with(stale, func(in *Input) { in.RepairsLeft = -1 }), "regenerate:budget_exhausted", []Reason{ReasonStaleContract}},
		{"degraded lifecycle repairs", with(lifecycle(Degraded)), "repair:degraded", nil},
		{"degraded counters repair", with(sickHealth), "repair:degraded", nil},
		{"degraded with budget spent", with(sickHealth, spent), "regenerate:budget_exhausted", []Reason{ReasonDegraded}},
		{"stale and degraded repairs the contract", with(stale, sickHealth), "repair:stale_contract", []Reason{ReasonDegraded}},
		{"an outage never degrades", with(outageHealth), "execute:healthy", nil},
		{"an outage never degrades a blessed one", with(outageHealth, lifecycle(Blessed)), "execute:blessed", nil},
		{"blessed", with(lifecycle(Blessed)), "execute:blessed", nil},
		{"blessed and stale says so", with(lifecycle(Blessed), stale), "execute:blessed", []Reason{ReasonStaleContract}},
		{"blessed and degraded says so", with(lifecycle(Blessed), sickHealth, stale), "execute:blessed", []Reason{ReasonStaleContract, ReasonDegraded}},
		{"blessed with spent budget still executes", with(lifecycle(Blessed), stale, spent, repairOff), "execute:blessed", []Reason{ReasonStaleContract}},
		{"blessed incompatible refuses instead of replacing", with(lifecycle(Blessed), runtime("2.0.0")), "refuse:incompatible_runtime", []Reason{ReasonBlessed}},
		{"blessed under generate-only", with(lifecycle(Blessed), generateOnly), "generate:generate_only", []Reason{ReasonBlessed}},
		{"archived is revived", with(lifecycle(Archived)), "execute:archived", nil},
		{"archived and stale repairs", with(lifecycle(Archived), stale), "repair:stale_contract", []Reason{ReasonArchived}},
		{"archived and incompatible regenerates", with(lifecycle(Archived), schema(3)), "regenerate:incompatible_schema", []Reason{ReasonArchived}},
		{"read path off", with(readOff), "generate:read_path_off", nil},
		{"generate-only beats read path off", with(readOff, generateOnly), "generate:generate_only", []Reason{ReasonReadPathOff}},
		{"canary includes the role", with(canary("math", "text")), "execute:healthy", nil},
		{"canary excludes the role", with(canary("math")), "generate:canary_excluded", nil},
		{"read path off beats canary", with(canary("math"), readOff), "generate:read_path_off", []Reason{ReasonCanaryExcluded}},
		{"repair off alone changes nothing", with(repairOff), "execute:healthy", nil},
		{"spent budget alone changes nothing", with(spent), "execute:healthy", nil},
		{"a new prompt version is not a reason", with(prompt("2027-06-01.v9")), "execute:healthy", nil},
		{"a new prompt version is not a reason for stale either", with(stale, prompt("")), "repair:stale_contract", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(tc.in)
			assert.Equal(t, tc.want, string(d.Action)+":"+string(d.Reason), d.String())
			assert.Equal(t, NotesOf(tc.notes...), d.Notes, "notes: got %s", d.Notes)
		})
	}
}

// rank is the precedence of the package documentation; repair_off and budget_exhausted decide only
// when a repair was wanted, right before the repair reasons.
var rank = map[Reason]int{
	ReasonMissing: 0, ReasonCorrupt: 1, ReasonQuarantined: 2, ReasonGenerateOnly: 3, ReasonReadPathOff: 4,
	ReasonCanaryExcluded: 5, ReasonForced: 6, ReasonIncompatibleSchema: 7, ReasonIncompatibleRuntime: 8,
	ReasonBlessed: 9, ReasonRepairOff: 10, ReasonBudgetExhausted: 11, ReasonStaleContract: 12,
	ReasonDegraded: 13, ReasonArchived: 14, ReasonHealthy: 15,
}

// allowed lists the reasons each action may carry.
var allowed = map[Action][]Reason{
	Execute:    {ReasonHealthy, ReasonBlessed, ReasonArchived},
	Repair:     {ReasonStaleContract, ReasonDegraded},
	Regenerate: {ReasonForced, ReasonIncompatibleSchema, ReasonIncompatibleRuntime, ReasonRepairOff, ReasonBudgetExhausted},
	Generate:   {ReasonMissing, ReasonCorrupt, ReasonGenerateOnly, ReasonReadPathOff, ReasonCanaryExcluded},
	Refuse:     {ReasonQuarantined, ReasonIncompatibleSchema, ReasonIncompatibleRuntime},
}

// holds says whether the condition a reason names is true of the input, read directly from the
// fields (not through Decide's helpers, except the two documented predicates).
func holds(in Input, r Reason) bool {
	a, readable := in.Artifact, !in.Artifact.Missing && !in.Artifact.Corrupt && in.Artifact.Lifecycle.Valid()
	wantsRepair := readable && (a.ContractFingerprint != in.Current.ContractFingerprint ||
		a.Lifecycle == Degraded || a.Health.Degraded(in.Policy))
	switch r {
	case ReasonMissing:
		return a.Missing
	case ReasonCorrupt:
		return !a.Missing && (a.Corrupt || !a.Lifecycle.Valid())
	case ReasonGenerateOnly:
		return in.Switches.GenerateOnly
	case ReasonReadPathOff:
		return in.Switches.ReadPathOff
	case ReasonCanaryExcluded:
		return in.Switches.CanaryExcludes(in.Role)
	case ReasonQuarantined:
		return readable && a.Lifecycle == Quarantined
	case ReasonForced:
		return readable && a.ForcedRegeneration
	case ReasonIncompatibleSchema:
		return readable && a.SchemaVersion != in.Current.SchemaVersion
	case ReasonIncompatibleRuntime:
		return readable && !SameMajor(a.RuntimeVersion, in.Current.RuntimeVersion)
	case ReasonBlessed:
		return readable && a.Lifecycle == Blessed
	case ReasonStaleContract:
		return readable && a.ContractFingerprint != in.Current.ContractFingerprint
	case ReasonDegraded:
		return readable && (a.Lifecycle == Degraded || a.Health.Degraded(in.Policy))
	case ReasonArchived:
		return readable && a.Lifecycle == Archived
	case ReasonRepairOff:
		return in.Switches.RepairOff && wantsRepair
	case ReasonBudgetExhausted:
		return in.RepairsLeft <= 0 && wantsRepair
	case ReasonHealthy:
		return true
	}
	return false
}

// TestDecideMatrix generates every combination of the inputs that matter and checks the
// invariants that define the policy.
func TestDecideMatrix(t *testing.T) {
	bools := []bool{false, true}
	lifecycles := append(append([]Lifecycle{}, Lifecycles...), "", "zombie")
	runtimes := []string{"1.4.2", "1.0.0", "2.0.0", "dev"}
	healths := []Health{{Successes: 9}, {Successes: 1, IntrinsicFailures: 2, AdaptiveFailures: 2}, {Successes: 1, ExtrinsicFailures: 100}}
	canaries := [][]string{nil, {"text"}, {"math"}}

	seen := map[string]int{}
	n := 0
	for _, miss := range bools {
		for _, corr := range bools {
			for _, lc := range lifecycles {
				for _, schemaDiff := range bools {
					for _, rt := range runtimes {
						for _, force := range bools {
							for _, st := range bools {
								for _, h := range healths {
									for _, left := range []int{0, 1} {
										for _, rpOff := range bools {
											for _, rdOff := range bools {
												for _, genOnly := range bools {
													for _, can := range canaries {
														in := base()
														in.Artifact = Artifact{Missing: miss, Corrupt: corr, SchemaVersion: 1,
															RuntimeVersion: rt, Lifecycle: lc, ForcedRegeneration: force,
															ContractFingerprint: fpNow, PromptVersion: "p1", Health: h}
														if schemaDiff {
															in.Artifact.SchemaVersion = 2
														}
														if st {
															in.Artifact.ContractFingerprint = fpOld
														}
														in.RepairsLeft = left
														in.Switches = Switches{ReadPathOff: rdOff, RepairOff: rpOff, GenerateOnly: genOnly, Canary: can}
														d := Decide(in)
														n++
														seen[string(d.Action)+":"+string(d.Reason)]++
														if msg := violation(in, d); msg != "" {
															t.Fatalf("%s\ninput: %+v\ndecision: %s", msg, in, d)
														}
													}
												}
											}
										}
									}
								}
							}
						}
					}
				}
			}
		}
	}
	t.Logf("%d combinations, %d distinct decisions", n, len(seen))
	for act, rs := range allowed {
		for _, r := range rs {
			assert.NotZero(t, seen[string(act)+":"+string(r)], "decision %s:%s never reached", act, r)
		}
	}
}

// violation returns what invariant d breaks for in, or "".
func violation(in Input, d Decision) string {
	a := in.Artifact
	readable := !a.Missing && !a.Corrupt && a.Lifecycle.Valid()
	switched := in.Switches.GenerateOnly || in.Switches.ReadPathOff || in.Switches.CanaryExcludes(in.Role)
	incompatible := holds(in, ReasonIncompatibleSchema) || holds(in, ReasonIncompatibleRuntime)

	ok := false
	for _, r := range allowed[d.Action] {
		ok = ok || r == d.Reason
	}
	switch {
	case !ok:
		return "reason not allowed for action"
	case d.Notes.Has(d.Reason):
		return "notes repeat the reason"
	case !holds(in, d.Reason):
		return "the reason's condition does not hold"
	}
	for _, r := range d.Notes.Reasons() {
		if !holds(in, r) {
			return "note " + string(r) + " does not hold"
		}
		if rank[r] < rank[d.Reason] && !(r == ReasonQuarantined && a.ForcedRegeneration) {
			return "note " + string(r) + " outranks the reason"
		}
	}
	// Notes are complete: every condition that holds is the reason or a note (repair_off and
	// budget_exhausted are noted only when they turned a wanted repair into a regeneration).
	for _, r := range Reasons {
		if r == ReasonHealthy || r == d.Reason || d.Notes.Has(r) || !holds(in, r) {
			continue
		}
		if (r == ReasonRepairOff || r == ReasonBudgetExhausted) && d.Reason != ReasonRepairOff && d.Reason != ReasonBudgetExhausted {
			continue
		}
		return "condition " + string(r) + " holds but is neither reason nor note"
	}

	// prompt_version is never a reason; extrinsic failures never count.
	alt := in
	alt.Artifact.PromptVersion, alt.Current.PromptVersion = "other-prompt", "newest-prompt"
	alt.Artifact.Health.ExtrinsicFailures += 1000
	if Decide(alt) != d {
		return "prompt_version or extrinsic failures changed the decision"
	}

	switch {
	case a.Missing && (d.Action != Generate || d.Reason != ReasonMissing):
		return "missing must generate"
	case !a.Missing && !readable && (d.Action != Generate || d.Reason != ReasonCorrupt):
		return "corrupt must generate"
	case readable && a.Lifecycle == Quarantined && !a.ForcedRegeneration && d.Action != Refuse:
		return "quarantined must refuse"
	case readable && a.ForcedRegeneration && !switched && (d.Action != Regenerate || d.Reason != ReasonForced):
		return "an operator-forced regeneration did not regenerate"
	case d.Action == Refuse && !(a.Lifecycle == Quarantined || (a.Lifecycle == Blessed && incompatible)):
		return "refuse without quarantine or a pinned incompatible artifact"
	case readable && a.Lifecycle == Blessed && !a.ForcedRegeneration && !switched && d.Action != Execute && d.Action != Refuse:
		return "blessed artifact auto-replaced"
	case switched && (d.Action == Execute || d.Action == Repair):
		return "a kill switch or the canary let persisted code run"
	case d.Action == Repair && (in.Switches.RepairOff || in.RepairsLeft <= 0 || a.Lifecycle == Blessed):
		return "repair without budget, with repair off, or of a blessed artifact"
	case d.Action == Execute && (incompatible || a.ForcedRegeneration):
		return "executed an incompatible or forced artifact"
	case d.Action == Execute && a.Lifecycle != Blessed && (holds(in, ReasonStaleContract) || holds(in, ReasonDegraded)):
		return "executed a stale or degraded artifact that is not blessed"
	case d.Reason == ReasonHealthy && !(a.Lifecycle == Candidate || a.Lifecycle == Durable):
		return "healthy outside candidate and durable"
	}
	return ""
}

func TestSameMajor(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{
		{"1.2.3", "1.2.3", true},
		{"1.2.3", "1.9.0", true},
		{"v1.2.3", "1.0.0", true},
		{"1.2.3-rc.1", "1.0.0+build", true},
		{"1", "1.5", true},
		{"0.1.0", "0.9.0", true},
		{"1.2.3", "2.0.0", false},
		{"0.9.0", "1.0.0", false},
		{"", "1.0.0", false},
		{"dev", "1.0.0", false},
		{"dev", "dev", true},
		{"1x.0", "1.0", false},
		{"v", "1.0", false},
		{"99999999999999999999.0", "1.0", false},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, SameMajor(tc.a, tc.b), "%q vs %q", tc.a, tc.b)
		assert.Equal(t, tc.want, SameMajor(tc.b, tc.a), "%q vs %q", tc.b, tc.a)
	}
}

func TestHealthDegraded(t *testing.T) {
	strict := HealthPolicy{MinFailures: 1, MaxFailureRate: 0.1}
	cases := []struct {
		h      Health
		p      HealthPolicy
		want   bool
		reason string
	}{
		{Health{}, HealthPolicy{}, false, "no calls"},
		{Health{Successes: 100}, HealthPolicy{}, false, "all good"},
		{Health{IntrinsicFailures: 2}, HealthPolicy{}, false, "below the minimum of own failures"},
		{Health{IntrinsicFailures: 3}, HealthPolicy{}, true, "three own failures, no successes"},
		{Health{IntrinsicFailures: 1, AdaptiveFailures: 2, Successes: 3}, HealthPolicy{}, true, "exactly half"},
		{Health{IntrinsicFailures: 1, AdaptiveFailures: 2, Successes: 4}, HealthPolicy{}, false, "under half"},
		{Health{ExtrinsicFailures: 1 << 20}, HealthPolicy{}, false, "extrinsic never counts"},
		{Health{ExtrinsicFailures: 1 << 20, IntrinsicFailures: 3, Successes: 3}, HealthPolicy{}, true, "extrinsic neither dilutes"},
		{Health{IntrinsicFailures: 1, Successes: 9}, strict, true, "custom policy"},
		{Health{IntrinsicFailures: 1, Successes: 10}, strict, false, "custom policy, under"},
		{Health{IntrinsicFailures: 3, Successes: -5}, HealthPolicy{}, true, "negative successes read as zero"},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, tc.h.Degraded(tc.p), tc.reason)
	}
}

func TestNotes(t *testing.T) {
	n := NotesOf(ReasonDegraded, ReasonStaleContract, "nonsense")
	assert.True(t, n.Has(ReasonStaleContract))
	assert.False(t, n.Has(ReasonBlessed))
	assert.False(t, n.Has("nonsense"))
	assert.Equal(t, "stale_contract,degraded", n.String())
	b, err := json.Marshal(Decision{Execute, ReasonBlessed, n})
	require.NoError(t, err)
	assert.JSONEq(t, `{"Action":"execute","Reason":"blessed","Notes":["stale_contract","degraded"]}`, string(b))
	var back Decision
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, Decision{Execute, ReasonBlessed, n}, back)
	b, err = json.Marshal(Notes(0))
	require.NoError(t, err)
	assert.Equal(t, "[]", string(b))

	seen := map[Notes]Reason{}
	for _, r := range Reasons {
		require.True(t, r.Valid(), r)
		require.NotContains(t, seen, r.note(), "reasons %s and %s share a bit", r, seen[r.note()])
		seen[r.note()] = r
	}
	assert.False(t, Reason("").Valid())
}

func TestHint(t *testing.T) {
	q := Decide(with(lifecycle(Quarantined)))
	assert.Equal(t, "text.upper is quarantined: run `forge rollback text upper` to restore an earlier generation, "+
		"or `forge regen text upper` to generate a new one; if the quarantine was a mistake, `forge quarantine lift text upper` "+
		"puts the code back in service once the gate has passed it again", q.Hint("text", "upper"))
	b := Decide(with(lifecycle(Blessed), schema(7)))
	assert.Contains(t, b.Hint("text", "upper"), "blessed but was stored under another schema version")
	assert.Contains(t, b.Hint("text", "upper"), "forge regen text upper")
	r := Decide(with(lifecycle(Blessed), runtime("3.0.0")))
	assert.Contains(t, r.Hint("text", "upper"), "another major runtime version")
	assert.Empty(t, Decide(with()).Hint("text", "upper"))
}

func TestValid(t *testing.T) {
	for act := range allowed {
		assert.True(t, act.Valid())
	}
	assert.False(t, Action("explode").Valid())
	for _, l := range Lifecycles {
		assert.True(t, l.Valid())
	}
	assert.Len(t, rank, len(Reasons))
	assert.Equal(t, fmt.Sprint(Decide(with(lifecycle(Blessed), stale))), "execute:blessed (stale_contract)")
}

func BenchmarkDecideHealthy(b *testing.B) {
	in := with(canary("math", "text"))
	b.ReportAllocs()
	for b.Loop() {
		if Decide(in).Action != Execute {
			b.Fatal("not execute")
		}
	}
}

func BenchmarkDecideStale(b *testing.B) {
	in := with(stale, lifecycle(Blessed), sickHealth)
	b.ReportAllocs()
	for b.Loop() {
		if Decide(in).Action != Execute {
			b.Fatal("not execute")
		}
	}
}
