package repair

import (
	"github.com/artifactforge/forge/classifier"
	"github.com/artifactforge/forge/selector"
)

// Step is what the forge does right after an execution failed.
type Step string

// Steps after a failure.
const (
	StepNone       Step = "none"       // return the failure as it is
	StepRepair     Step = "repair"     // ask the provider to fix the code now
	StepRegenerate Step = "regenerate" // write the code again from the contract now
)

// Failed is the plain data AfterFailure reads.
type Failed struct {
	Class       classifier.Class   // from classifier.Classify
	Lifecycle   selector.Lifecycle // of the artifact that failed
	RepairCount int                // repair_count_since_regen
	Budget      Budget
	RepairOff   bool // the repair kill switch
}

// Plan is the step after a failure, why, and the lineage trigger of the generation it will write
// (the zero Trigger for StepNone).
type Plan struct {
	Step Step
	// Why is a stable id: for none the class (extrinsic, caller), the lifecycle (blessed,
	// quarantined) or unknown_class; for repair the class; for regenerate the selector reason
	// (repair_off, budget_exhausted).
	Why     string
	Trigger Trigger
}

// AfterFailure decides what follows a failed execution of an artifact:
//
//   - extrinsic or caller failures: none — the outside world or the caller is at fault, the code
//     stays as it is and its health is untouched;
//   - a blessed artifact: none — it is pinned; the failure is counted and reported, and an
//     operator decides;
//   - a quarantined artifact (it should not have run): none;
//   - intrinsic or adaptive with the repair switch off: regenerate (repair_off);
//   - intrinsic or adaptive with the budget spent: regenerate (budget_exhausted), which resets it;
//   - otherwise: repair, recorded as repair:<class>.
//
// An unknown class takes no automatic step.
func AfterFailure(f Failed) Plan {
	switch {
	case !f.Class.Valid():
		return Plan{Step: StepNone, Why: "unknown_class"}
	case !f.Class.Repairable():
		return Plan{Step: StepNone, Why: string(f.Class)}
	case f.Lifecycle == selector.Blessed || f.Lifecycle == selector.Quarantined:
		return Plan{Step: StepNone, Why: string(f.Lifecycle)}
	case f.RepairOff:
		return Plan{StepRegenerate, string(selector.ReasonRepairOff), Regenerated(selector.ReasonRepairOff)}
	case f.Budget.Exhausted(f.RepairCount):
		return Plan{StepRegenerate, string(selector.ReasonBudgetExhausted), Regenerated(selector.ReasonBudgetExhausted)}
	}
	return Plan{StepRepair, string(f.Class), Repaired(f.Class)}
}
