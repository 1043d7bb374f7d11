package classifier

// Input is the evidence about the args one failure happened on, beyond the failure itself: plain
// data the forge gathers on a failure (never on a success), so that Attribute stays pure.
type Input struct {
	// Covered: an acceptance example of the contract has these args and expects a value, so
	// the contract says they must succeed.
	Covered bool
	// Counted: a failure of the same code (the same generation) on the same args already
	// counted toward its health.
	Counted bool
	// OtherCodeFails: other code that passed the acceptance set — the repair or regeneration
	// this failure led to — failed on the same args too.
	OtherCodeFails bool
	// OthersPass: the code's recent calls held no failure that counts toward health before this
	// one: every other recent input passed.
	OthersPass bool
	// PreviousFails: the generation before the code, run on the same args, failed too (a failure
	// of its own, not an outage).
	PreviousFails bool
	// SamplePasses: every input of the code's sample of real calls (at least one) got a value.
	SamplePasses bool
	// Delegates: the code may delegate (host.Call), so what it does with an input depends on
	// other roles' code too, and no evidence about the input alone can be had from its runs.
	Delegates bool
}

// Attribute decides whose failure r is once the input is taken into account: the rule that no
// single caller can move an artifact's health with inputs its acceptance set passes on.
//
//   - A failure that does not count toward health (extrinsic, caller) stays as it is.
//   - So does the failure of code that delegates: the roles it calls take part in every run
//     (a runaway chain, a callee that spins), so a failure on one input may be theirs or its
//     own, never the input's alone.
//   - A failure on args the contract covers (an acceptance example expects a value for them)
//     is the code's, always.
//   - A repeat — the same code already failed on the same args, and that failure counted — is
//     the input's (caller, input_repeated): one input counts once, so a caller who sends it
//     again and again moves nothing, and spends no repair on it.
//   - A failure that other code passing the acceptance set fails on too, while every other
//     recent input passed, is the input's (caller, input_specific): changing the code does not
//     help, so it neither degrades the code nor spends more repairs; the input or the contract's
//     limits must change.
//   - A run past one of the role's limits (time, memory, output, depth) that the previous
//     generation makes too, while every input of the code's sample of real calls got a value, is
//     the input's (caller, input_previous_fails): two versions of the code pass the limit on it
//     and the inputs callers send do not, so it asks too much (safe regeneration's blame). Any
//     other failure (a panic, say) on an input the signature accepts stays the code's, older
//     generations' bug or not: a repair may fix what the last one left.
//   - Anything else is the code's, as classified.
//
// An artifact is thus degraded only by failures on several distinct inputs (selector.Health and
// its policy count them), which one caller's input cannot make alone.
func Attribute(r Result, in Input) Result {
	switch {
	case !r.Class.CountsTowardHealth(), in.Delegates, in.Covered:
		return r
	case in.Counted:
		return Result{Caller, RuleInputRepeated}
	case in.OtherCodeFails && in.OthersPass:
		return Result{Caller, RuleInputSpecific}
	case in.PreviousFails && in.SamplePasses && r.Rule.isLimit():
		return Result{Caller, RuleInputPreviousFails}
	}
	return r
}

// isLimit says whether a rule is a run passing one of the role's limits (time, memory, output,
// call depth): what an input can ask too much of, whatever the code. A panic, a policy violation
// or a wrong answer on an input the signature accepts is a bug, even when an older generation had
// it too, and asks for a repair.
func (r Rule) isLimit() bool {
	switch r {
	case RuleDeadlineCompute, RuleMemoryCap, RuleOutputCap, RuleDepthCap:
		return true
	}
	return false
}
