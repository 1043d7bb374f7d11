package selector

import "fmt"

// Action is what the forge does for a call.
type Action string

// Actions. Generate and Regenerate both ask the provider for new code from the contract:
// Generate when there is no usable artifact (or the store is bypassed), Regenerate when a readable
// artifact is replaced and its lineage continues.
const (
	Execute    Action = "execute"    // run the persisted artifact, no provider call
	Repair     Action = "repair"     // ask the provider to fix the persisted code, then run it
	Regenerate Action = "regenerate" // replace the persisted code with new code from the contract
	Generate   Action = "generate"   // write code from the contract; nothing usable is persisted
	Refuse     Action = "refuse"     // do not run: an operator must act first
)

// Valid reports whether a is one of the five actions.
func (a Action) Valid() bool {
	switch a {
	case Execute, Repair, Regenerate, Generate, Refuse:
		return true
	}
	return false
}

// Lifecycle is where an artifact stands, as stored in its file.
type Lifecycle string

// Lifecycle states (DESIGN.md, Data model).
const (
	Candidate   Lifecycle = "candidate"   // passed the gate, not yet proven by calls
	Durable     Lifecycle = "durable"     // proven by calls
	Blessed     Lifecycle = "blessed"     // pinned by an operator: always executed, never auto-replaced
	Degraded    Lifecycle = "degraded"    // failing by intrinsic or adaptive failures
	Quarantined Lifecycle = "quarantined" // refused until an operator rolls back or regenerates
	Archived    Lifecycle = "archived"    // pruned from listings and prompts; revived by a call
)

// Lifecycles lists every lifecycle state, for exhaustive tests.
var Lifecycles = []Lifecycle{Candidate, Durable, Blessed, Degraded, Quarantined, Archived}

// Valid reports whether l is a known lifecycle state.
func (l Lifecycle) Valid() bool {
	switch l {
	case Candidate, Durable, Blessed, Degraded, Quarantined, Archived:
		return true
	}
	return false
}

// Switches are the operator's kill switches and canary list (seed 001, Rollout controls). The zero
// value is everything on, every role.
type Switches struct {
	ReadPathOff  bool     // never execute or repair persisted code; generate and write
	RepairOff    bool     // never repair; regenerate instead
	GenerateOnly bool     // behave as before persistence: generate every call, persist nothing
	Canary       []string // roles whose read path is on; empty = every role
}

// CanaryExcludes reports whether the canary list keeps role off the read path.
func (s Switches) CanaryExcludes(role string) bool {
	if len(s.Canary) == 0 {
		return false
	}
	for _, r := range s.Canary {
		if r == role {
			return false
		}
	}
	return true
}

// Artifact is the state of the persisted artifact, as plain data. When Missing or Corrupt is set the
// other fields are not read.
type Artifact struct {
	Missing             bool // no file for this role+method
	Corrupt             bool // the file does not parse, or its code does not match its checksum
	SchemaVersion       int
	RuntimeVersion      string // semantic version of the forge that wrote it, "1.4.2" or "v1.4.2"
	Lifecycle           Lifecycle
	ForcedRegeneration  bool   // an operator marked it (`forge regen --next-call`)
	ContractFingerprint string // of the contract the code was verified against
	PromptVersion       string // metadata only: never read by Decide
	Health              Health // of the current generation
}

// Current is what the running forge expects of an artifact.
type Current struct {
	SchemaVersion       int
	RuntimeVersion      string
	ContractFingerprint string // of the role's contract now
	PromptVersion       string // metadata only: never read by Decide
}

// Input is everything Decide reads.
type Input struct {
	Switches Switches
	Role     string
	Artifact Artifact
	Current  Current
	// RepairsLeft is how many repairs the budget still allows since the last regeneration
	// (repair.Budget.Remaining of the artifact's repair_count_since_regen); 0 or less is spent.
	RepairsLeft int
	// Policy decides when the health counters mean degraded; the zero value is
	// DefaultHealthPolicy.
	Policy HealthPolicy
}

// Decision is what to do and why.
type Decision struct {
	Action Action
	Reason Reason
	// Notes are the other conditions that held but did not decide (a blessed artifact that is
	// stale notes stale_contract). They go into events, never into lineage.
	Notes Notes
}

// String renders "action:reason" and the notes, for logs and test failures.
func (d Decision) String() string {
	s := string(d.Action) + ":" + string(d.Reason)
	if d.Notes != 0 {
		s += " (" + d.Notes.String() + ")"
	}
	return s
}

// Hint tells an operator what to do about a refusal; it is empty for every other decision.
func (d Decision) Hint(role, method string) string {
	if d.Action != Refuse {
		return ""
	}
	switch d.Reason {
	case ReasonQuarantined:
		return fmt.Sprintf("%s.%s is quarantined: run `forge rollback %s %s` to restore an earlier generation, "+
			"or `forge regen %s %s` to generate a new one; if the quarantine was a mistake, `forge quarantine lift %s %s` "+
			"puts the code back in service once the gate has passed it again", role, method, role, method, role, method, role, method)
	case ReasonIncompatibleSchema, ReasonIncompatibleRuntime:
		return fmt.Sprintf("%s.%s is blessed but %s, so this forge cannot run it and will not replace it: "+
			"run `forge regen %s %s` to replace it", role, method, describe(d.Reason), role, method)
	}
	return ""
}

func describe(r Reason) string {
	if r == ReasonIncompatibleSchema {
		return "was stored under another schema version"
	}
	return "was written by another major runtime version"
}

// Decide chooses the action for a call. See the package documentation for the precedence.
func Decide(in Input) Decision {
	var sw Notes
	if in.Switches.GenerateOnly {
		sw |= nGenerateOnly
	}
	if in.Switches.ReadPathOff {
		sw |= nReadPathOff
	}
	if in.Switches.CanaryExcludes(in.Role) {
		sw |= nCanaryExcluded
	}

	a := in.Artifact
	if a.Missing {
		return Decision{Generate, ReasonMissing, sw}
	}
	if a.Corrupt || !a.Lifecycle.Valid() {
		return Decision{Generate, ReasonCorrupt, sw}
	}

	st := sw
	set := func(cond bool, bit Notes) {
		if cond {
			st |= bit
		}
	}
	set(a.Lifecycle == Quarantined, nQuarantined)
	set(a.ForcedRegeneration, nForced)
	set(a.SchemaVersion != in.Current.SchemaVersion, nIncompatibleSchema)
	set(!SameMajor(a.RuntimeVersion, in.Current.RuntimeVersion), nIncompatibleRuntime)
	set(a.Lifecycle == Blessed, nBlessed)
	set(a.ContractFingerprint != in.Current.ContractFingerprint, nStaleContract)
	set(a.Lifecycle == Degraded || a.Health.Degraded(in.Policy), nDegraded)
	set(a.Lifecycle == Archived, nArchived)

	decide := func(act Action, r Reason) Decision { return Decision{act, r, st &^ r.note()} }
	switch {
	case st&nQuarantined != 0 && st&nForced == 0:
		return decide(Refuse, ReasonQuarantined)
	case st&nGenerateOnly != 0:
		return decide(Generate, ReasonGenerateOnly)
	case st&nReadPathOff != 0:
		return decide(Generate, ReasonReadPathOff)
	case st&nCanaryExcluded != 0:
		return decide(Generate, ReasonCanaryExcluded)
	case st&nForced != 0:
		return decide(Regenerate, ReasonForced)
	}
	if st&(nIncompatibleSchema|nIncompatibleRuntime) != 0 {
		act, r := Regenerate, ReasonIncompatibleSchema
		if st&nBlessed != 0 {
			act = Refuse // pinned: neither run what cannot run nor replace it unasked
		}
		if st&nIncompatibleSchema == 0 {
			r = ReasonIncompatibleRuntime
		}
		return decide(act, r)
	}
	if st&nBlessed != 0 {
		return decide(Execute, ReasonBlessed)
	}
	if st&nStaleContract != 0 || st&nDegraded != 0 {
		set(in.Switches.RepairOff, nRepairOff)
		set(in.RepairsLeft <= 0, nBudgetExhausted)
		switch {
		case st&nRepairOff != 0:
			return decide(Regenerate, ReasonRepairOff)
		case st&nBudgetExhausted != 0:
			return decide(Regenerate, ReasonBudgetExhausted)
		case st&nStaleContract != 0:
			return decide(Repair, ReasonStaleContract)
		default:
			return decide(Repair, ReasonDegraded)
		}
	}
	if st&nArchived != 0 {
		return decide(Execute, ReasonArchived)
	}
	return decide(Execute, ReasonHealthy)
}

// SameMajor reports whether two runtime versions share their MAJOR number, which is what makes
// an artifact runnable: forge bumps MAJOR only when the artifact ABI or the host API breaks, so
// minor and patch releases keep every artifact. A version whose major cannot be read is compatible
// only with the identical string.
func SameMajor(a, b string) bool {
	if a == b {
		return true
	}
	ma, okA := major(a)
	mb, okB := major(b)
	return okA && okB && ma == mb
}

// major reads the leading number of "v1.2.3", "1.2.3-rc.1" or "1".
func major(v string) (int, bool) {
	if len(v) > 0 && (v[0] == 'v' || v[0] == 'V') {
		v = v[1:]
	}
	n, i := 0, 0
	for ; i < len(v) && v[i] >= '0' && v[i] <= '9'; i++ {
		if n > 1<<20 {
			return 0, false
		}
		n = n*10 + int(v[i]-'0')
	}
	if i == 0 || (i < len(v) && v[i] != '.' && v[i] != '-' && v[i] != '+') {
		return 0, false
	}
	return n, true
}
