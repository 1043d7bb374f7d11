package repair

import (
	"fmt"
	"strings"

	"github.com/artifactforge/forge/classifier"
	"github.com/artifactforge/forge/selector"
)

// TriggerKind is the first part of a lineage trigger.
type TriggerKind string

// Trigger kinds.
const (
	TriggerInitialForge TriggerKind = "initial_forge" // first code for a role+method
	TriggerRepair       TriggerKind = "repair"        // repair:<class>
	TriggerRegenerate   TriggerKind = "regenerate"    // regenerate:<reason>
	TriggerOperator     TriggerKind = "operator"      // operator:<verb>[:<arg>]
)

// Verb is an operator command that can start a generation or change an artifact's standing.
type Verb string

// Operator verbs, as the CLI names them.
const (
	VerbRegen      Verb = "regen"
	VerbBless      Verb = "bless"
	VerbQuarantine Verb = "quarantine"
	VerbRollback   Verb = "rollback" // arg: the generation restored, "gen-N"
	VerbPrune      Verb = "prune"
	VerbEdit       Verb = "edit" // code written by an operator (`forge edit`), through the gate
)

// Verbs lists every operator verb.
var Verbs = []Verb{VerbRegen, VerbBless, VerbQuarantine, VerbRollback, VerbPrune, VerbEdit}

// RegenerateReasons are the selector reasons a regenerate:<reason> trigger may carry: every
// reason for which Decide or AfterFailure writes new code over a readable or unreadable artifact.
// missing is not one: the first code is initial_forge.
var RegenerateReasons = []selector.Reason{
	selector.ReasonCorrupt, selector.ReasonGenerateOnly, selector.ReasonReadPathOff,
	selector.ReasonCanaryExcluded, selector.ReasonForced, selector.ReasonIncompatibleSchema,
	selector.ReasonIncompatibleRuntime, selector.ReasonRepairOff, selector.ReasonBudgetExhausted,
}

// Trigger is why a generation exists, recorded in the artifact's history as its string form.
// Build it with InitialForge, Repaired, Regenerated or ByOperator; read it with ParseTrigger.
type Trigger struct {
	Kind   TriggerKind
	Class  classifier.Class // repair: the class of the failure repaired
	Reason selector.Reason  // regenerate: why the code was rewritten
	Verb   Verb             // operator: the command
	Arg    string           // operator: its argument (rollback: the generation restored)
}

// InitialForge is the trigger of the first generation of a role+method.
func InitialForge() Trigger { return Trigger{Kind: TriggerInitialForge} }

// Repaired is the trigger of a generation that repaired a failure of class c.
func Repaired(c classifier.Class) Trigger { return Trigger{Kind: TriggerRepair, Class: c} }

// Regenerated is the trigger of a generation written from the contract for reason r.
func Regenerated(r selector.Reason) Trigger { return Trigger{Kind: TriggerRegenerate, Reason: r} }

// ByOperator is the trigger of a generation an operator asked for; arg is optional
// (ByOperator(VerbRollback, "gen-2")).
func ByOperator(v Verb, arg string) Trigger { return Trigger{Kind: TriggerOperator, Verb: v, Arg: arg} }

// String renders the stored form: initial_forge, repair:intrinsic, regenerate:budget_exhausted,
// operator:rollback:gen-2.
func (t Trigger) String() string {
	switch t.Kind {
	case TriggerRepair:
		return "repair:" + string(t.Class)
	case TriggerRegenerate:
		return "regenerate:" + string(t.Reason)
	case TriggerOperator:
		if t.Arg != "" {
			return "operator:" + string(t.Verb) + ":" + t.Arg
		}
		return "operator:" + string(t.Verb)
	}
	return string(t.Kind)
}

// Validate reports what is wrong with t, if anything: an unknown kind, a repair of a class the
// forge never repairs, a regeneration reason that never regenerates, an unknown verb or a bad
// rollback argument.
func (t Trigger) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("repair: trigger %q: %s", t.String(), fmt.Sprintf(format, args...))
	}
	switch t.Kind {
	case TriggerInitialForge:
		if t.Class != "" || t.Reason != "" || t.Verb != "" || t.Arg != "" {
			return bad("initial_forge takes no detail")
		}
		return nil
	case TriggerRepair:
		if !t.Class.Repairable() {
			return bad("repairs are for intrinsic or adaptive failures, not %q", t.Class)
		}
		if t.Reason != "" || t.Verb != "" || t.Arg != "" {
			return bad("repair takes only a class")
		}
		return nil
	case TriggerRegenerate:
		if !regenerates(t.Reason) {
			return bad("%q is not a regeneration reason (want one of %v)", t.Reason, RegenerateReasons)
		}
		if t.Class != "" || t.Verb != "" || t.Arg != "" {
			return bad("regenerate takes only a reason")
		}
		return nil
	case TriggerOperator:
		if !validVerb(t.Verb) {
			return bad("unknown operator verb %q (want one of %v)", t.Verb, Verbs)
		}
		if t.Class != "" || t.Reason != "" {
			return bad("operator takes only a verb and an argument")
		}
		if t.Arg != "" && (t.Verb != VerbRollback || !isGenerationID(t.Arg)) {
			return bad("only rollback takes an argument, a generation id like gen-2")
		}
		return nil
	}
	return bad("unknown kind (want initial_forge, repair:<class>, regenerate:<reason> or operator:<verb>)")
}

// ParseTrigger reads a stored trigger and validates it.
func ParseTrigger(s string) (Trigger, error) {
	head, rest, _ := strings.Cut(s, ":")
	var t Trigger
	switch TriggerKind(head) {
	case TriggerInitialForge:
		if rest != "" || strings.Contains(s, ":") {
			return Trigger{}, fmt.Errorf("repair: trigger %q: initial_forge takes no detail", s)
		}
		t = InitialForge()
	case TriggerRepair:
		t = Repaired(classifier.Class(rest))
	case TriggerRegenerate:
		t = Regenerated(selector.Reason(rest))
	case TriggerOperator:
		verb, arg, hasArg := strings.Cut(rest, ":")
		t = ByOperator(Verb(verb), arg)
		if hasArg && arg == "" && validVerb(t.Verb) {
			return Trigger{}, fmt.Errorf("repair: trigger %q: empty operator argument", s)
		}
	default:
		return Trigger{}, fmt.Errorf("repair: trigger %q: unknown kind %q (want initial_forge, repair:<class>, regenerate:<reason> or operator:<verb>)", s, head)
	}
	if err := t.Validate(); err != nil {
		return Trigger{}, err
	}
	return t, nil
}

// MarshalText writes the stored form, refusing an invalid trigger so none reaches the history.
func (t Trigger) MarshalText() ([]byte, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	return []byte(t.String()), nil
}

// UnmarshalText reads the stored form with ParseTrigger.
func (t *Trigger) UnmarshalText(b []byte) error {
	p, err := ParseTrigger(string(b))
	if err != nil {
		return err
	}
	*t = p
	return nil
}

// TriggerFor is the trigger of the generation a selector decision produces, and false when the
// decision produces none (execute, refuse). last is the artifact's last failure class: a repair of
// a degraded artifact is recorded under it (intrinsic when it is not a repairable class); a repair
// of a stale contract is adaptive by definition.
func TriggerFor(d selector.Decision, last classifier.Class) (Trigger, bool) {
	switch d.Action {
	case selector.Generate:
		if d.Reason == selector.ReasonMissing {
			return InitialForge(), true
		}
		return Regenerated(d.Reason), true
	case selector.Regenerate:
		return Regenerated(d.Reason), true
	case selector.Repair:
		if d.Reason == selector.ReasonStaleContract {
			return Repaired(classifier.Adaptive), true
		}
		if last.Repairable() {
			return Repaired(last), true
		}
		return Repaired(classifier.Intrinsic), true
	}
	return Trigger{}, false
}

func regenerates(r selector.Reason) bool {
	for _, x := range RegenerateReasons {
		if r == x {
			return true
		}
	}
	return false
}

func validVerb(v Verb) bool {
	for _, x := range Verbs {
		if v == x {
			return true
		}
	}
	return false
}

func isGenerationID(s string) bool {
	n, ok := strings.CutPrefix(s, "gen-")
	if !ok || n == "" || len(n) > 9 || n[0] == '0' {
		return false
	}
	for i := 0; i < len(n); i++ {
		if n[i] < '0' || n[i] > '9' {
			return false
		}
	}
	return true
}
