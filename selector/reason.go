package selector

import (
	"encoding/json"
	"strings"
)

// Reason is the stable machine id of why Decide chose its action. Lineage records it as
// `regenerate:<reason>` and events carry it, so ids never change meaning once released.
type Reason string

// Reasons. Each is a condition; Decision.Reason is the one that decided and Decision.Notes the
// others that held.
const (
	ReasonHealthy             Reason = "healthy"              // nothing against the artifact
	ReasonMissing             Reason = "missing"              // no artifact on disk
	ReasonCorrupt             Reason = "corrupt"              // unparsable, checksum mismatch or unknown lifecycle
	ReasonIncompatibleSchema  Reason = "incompatible_schema"  // stored under another schema version
	ReasonIncompatibleRuntime Reason = "incompatible_runtime" // written by another MAJOR runtime version
	ReasonQuarantined         Reason = "quarantined"          // an operator quarantined it
	ReasonForced              Reason = "forced"               // an operator marked it for regeneration
	ReasonStaleContract       Reason = "stale_contract"       // the contract changed since it was verified
	ReasonDegraded            Reason = "degraded"             // failing by intrinsic or adaptive failures
	ReasonBlessed             Reason = "blessed"              // pinned by an operator
	ReasonArchived            Reason = "archived"             // pruned, revived by this call
	ReasonReadPathOff         Reason = "read_path_off"        // kill switch: persisted code is not read
	ReasonCanaryExcluded      Reason = "canary_excluded"      // the role is outside the canary list
	ReasonGenerateOnly        Reason = "generate_only"        // kill switch: generate every call, persist nothing
	ReasonRepairOff           Reason = "repair_off"           // kill switch: repair wanted but disabled
	ReasonBudgetExhausted     Reason = "budget_exhausted"     // repair wanted but the budget is spent
)

// Reasons lists every reason in a fixed order (the order of Notes bits).
var Reasons = []Reason{
	ReasonHealthy, ReasonMissing, ReasonCorrupt, ReasonIncompatibleSchema, ReasonIncompatibleRuntime,
	ReasonQuarantined, ReasonForced, ReasonStaleContract, ReasonDegraded, ReasonBlessed, ReasonArchived,
	ReasonReadPathOff, ReasonCanaryExcluded, ReasonGenerateOnly, ReasonRepairOff, ReasonBudgetExhausted,
}

// Valid reports whether r is a known reason.
func (r Reason) Valid() bool { return r.note() != 0 }

// One bit per reason, in the order of Reasons.
const (
	nHealthy Notes = 1 << iota
	nMissing
	nCorrupt
	nIncompatibleSchema
	nIncompatibleRuntime
	nQuarantined
	nForced
	nStaleContract
	nDegraded
	nBlessed
	nArchived
	nReadPathOff
	nCanaryExcluded
	nGenerateOnly
	nRepairOff
	nBudgetExhausted
)

func (r Reason) note() Notes {
	switch r {
	case ReasonHealthy:
		return nHealthy
	case ReasonMissing:
		return nMissing
	case ReasonCorrupt:
		return nCorrupt
	case ReasonIncompatibleSchema:
		return nIncompatibleSchema
	case ReasonIncompatibleRuntime:
		return nIncompatibleRuntime
	case ReasonQuarantined:
		return nQuarantined
	case ReasonForced:
		return nForced
	case ReasonStaleContract:
		return nStaleContract
	case ReasonDegraded:
		return nDegraded
	case ReasonBlessed:
		return nBlessed
	case ReasonArchived:
		return nArchived
	case ReasonReadPathOff:
		return nReadPathOff
	case ReasonCanaryExcluded:
		return nCanaryExcluded
	case ReasonGenerateOnly:
		return nGenerateOnly
	case ReasonRepairOff:
		return nRepairOff
	case ReasonBudgetExhausted:
		return nBudgetExhausted
	}
	return 0
}

// Notes is a set of reasons, kept as bits so that a decision on the warm path allocates nothing.
type Notes uint32

// NotesOf builds a set from reasons; unknown reasons are dropped.
func NotesOf(rs ...Reason) Notes {
	var n Notes
	for _, r := range rs {
		n |= r.note()
	}
	return n
}

// Has reports whether r is in the set.
func (n Notes) Has(r Reason) bool { b := r.note(); return b != 0 && n&b == b }

// Reasons lists the set in the fixed order of Reasons.
func (n Notes) Reasons() []Reason {
	var out []Reason
	for _, r := range Reasons {
		if n.Has(r) {
			out = append(out, r)
		}
	}
	return out
}

// String renders the set comma-separated, "" when empty.
func (n Notes) String() string {
	var b strings.Builder
	for _, r := range n.Reasons() {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(string(r))
	}
	return b.String()
}

// MarshalJSON writes the set as a list of reason ids, as events carry it.
func (n Notes) MarshalJSON() ([]byte, error) {
	rs := n.Reasons()
	if rs == nil {
		rs = []Reason{}
	}
	return json.Marshal(rs)
}

// UnmarshalJSON reads a list of reason ids; unknown ids are dropped so that old readers accept
// events written by newer forges.
func (n *Notes) UnmarshalJSON(data []byte) error {
	var rs []Reason
	if err := json.Unmarshal(data, &rs); err != nil {
		return err
	}
	*n = NotesOf(rs...)
	return nil
}
