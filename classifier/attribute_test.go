package classifier

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAttribute(t *testing.T) {
	mem := Result{Intrinsic, RuleMemoryCap}
	drift := Result{Adaptive, RuleDecodeUpstream}
	outage := Result{Extrinsic, RuleHostDNS}
	bad := Result{Caller, RuleArgs}
	for _, tc := range []struct {
		name string
		r    Result
		in   Input
		want Result
	}{
		{"a first failure is the code's", mem, Input{}, mem},
		{"a first failure with every other input passing is still the code's", mem, Input{OthersPass: true}, mem},
		{"a repeat on the same input is the input's", mem, Input{Counted: true}, Result{Caller, RuleInputRepeated}},
		{"an adaptive repeat too", drift, Input{Counted: true}, Result{Caller, RuleInputRepeated}},
		{"all code fails on it, others pass: the input's", mem, Input{OtherCodeFails: true, OthersPass: true}, Result{Caller, RuleInputSpecific}},
		{"all code fails on it, but other inputs failed too: the code's", mem, Input{OtherCodeFails: true}, mem},
		{"the contract covers the input: always the code's", mem, Input{Covered: true, Counted: true, OtherCodeFails: true, OthersPass: true}, mem},
		{"code that delegates: a repeat is still the code's", mem, Input{Delegates: true, Counted: true}, mem},
		{"code that delegates: every version failing is still the code's", Result{Intrinsic, RuleCallDepthCap}, Input{Delegates: true, OtherCodeFails: true, OthersPass: true}, Result{Intrinsic, RuleCallDepthCap}},
		{"the previous generation fails on it too, every sampled input passes: the input's", mem, Input{PreviousFails: true, SamplePasses: true}, Result{Caller, RuleInputPreviousFails}},
		{"the previous generation fails on it too, but a sampled input fails: the code's", drift, Input{PreviousFails: true}, drift},
		{"the previous generation panics on it too, every sampled input passes: still the code's (a bug to repair)", Result{Intrinsic, RulePanic}, Input{PreviousFails: true, SamplePasses: true}, Result{Intrinsic, RulePanic}},
		{"the previous generation runs out of time on it too, every sampled input passes: the input's", Result{Intrinsic, RuleDeadlineCompute}, Input{PreviousFails: true, SamplePasses: true}, Result{Caller, RuleInputPreviousFails}},
		{"every sampled input passes, the previous generation does not fail on it: the code's", mem, Input{SamplePasses: true}, mem},
		{"the previous generation fails too, but the contract covers the input: the code's", mem, Input{Covered: true, PreviousFails: true, SamplePasses: true}, mem},
		{"the previous generation fails too, but the code delegates: the code's", mem, Input{Delegates: true, PreviousFails: true, SamplePasses: true}, mem},
		{"an outage stays an outage", outage, Input{Counted: true, OtherCodeFails: true, OthersPass: true}, outage},
		{"a caller error stays as it is", bad, Input{Counted: true}, bad},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Attribute(tc.r, tc.in))
		})
	}
}

// TestAttributeNeverCounts: Attribute only ever takes a failure away from the code's health,
// never adds one, and answers with a rule of the table.
func TestAttributeNeverCounts(t *testing.T) {
	bools := []bool{false, true}
	for rule, info := range rules {
		r := Result{info.class, rule}
		for _, a := range bools {
			for _, b := range bools {
				for _, c := range bools {
					for _, d := range bools {
						got := Attribute(r, Input{Covered: a, Counted: b, OtherCodeFails: c, OthersPass: d, Delegates: a && d, PreviousFails: c != d, SamplePasses: b || d})
						assert.True(t, got.Rule.Valid())
						assert.Equal(t, got.Rule.Class(), got.Class)
						if !r.Class.CountsTowardHealth() {
							assert.Equal(t, r, got)
						}
						if got != r {
							assert.False(t, got.Class.CountsTowardHealth())
						}
					}
				}
			}
		}
	}
}
