package repair_test

import (
	"fmt"

	"github.com/artifactforge/forge/classifier"
	"github.com/artifactforge/forge/repair"
	"github.com/artifactforge/forge/selector"
)

func ExampleAfterFailure() {
	var budget repair.Budget // the default: 3 repairs before regeneration
	used := 0
	for _, f := range []classifier.Failure{
		{Kind: classifier.KindHost, HTTPStatus: 503}, // an outage: nothing to fix
		{Kind: classifier.KindPanic},
		{Kind: classifier.KindHost, HTTPStatus: 404},
		{Kind: classifier.KindPanic},
		{Kind: classifier.KindPanic}, // the fourth fixable failure: the budget is spent
		{Kind: classifier.KindArgs},  // the caller's fault
	} {
		r := classifier.Classify(f)
		p := repair.AfterFailure(repair.Failed{Class: r.Class, Lifecycle: selector.Durable, RepairCount: used, Budget: budget})
		used = repair.NextRepairCount(p.Trigger, used)
		fmt.Printf("%-24s -> %-10s %-22s repairs since regen: %d\n", r, p.Step, p.Trigger, used)
	}
	// Output:
	// extrinsic/host_http_5xx  -> none                              repairs since regen: 0
	// intrinsic/panic          -> repair     repair:intrinsic       repairs since regen: 1
	// adaptive/host_http_gone  -> repair     repair:adaptive        repairs since regen: 2
	// intrinsic/panic          -> repair     repair:intrinsic       repairs since regen: 3
	// intrinsic/panic          -> regenerate regenerate:budget_exhausted repairs since regen: 0
	// caller/args              -> none                              repairs since regen: 0
}

func ExampleParseTrigger() {
	for _, s := range []string{"initial_forge", "repair:adaptive", "regenerate:stale_contract", "operator:rollback:gen-2"} {
		t, err := repair.ParseTrigger(s)
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Println(t.Kind, t)
	}
	// Output:
	// initial_forge initial_forge
	// repair repair:adaptive
	// error: repair: trigger "regenerate:stale_contract": "stale_contract" is not a regeneration reason (want one of [corrupt generate_only read_path_off canary_excluded forced incompatible_schema incompatible_runtime repair_off budget_exhausted])
	// operator operator:rollback:gen-2
}

func ExampleTriggerFor() {
	d := selector.Decision{Action: selector.Regenerate, Reason: selector.ReasonForced}
	t, ok := repair.TriggerFor(d, "")
	fmt.Println(t, ok)
	// Output: regenerate:forced true
}

func ExampleNewBudget() {
	b, err := repair.ParseBudget("2") // e.g. from MAX_REPAIRS_BEFORE_REGEN
	if err != nil {
		panic(err)
	}
	fmt.Println(b.Max(), b.Remaining(1), b.Exhausted(2))
	// Output: 2 1 true
}

func ExampleNewRepair() {
	failed := repair.Attempt{
		Code:   "package artifact\n\nfunc Upper(s string) string { return s[:1] }\n",
		Error:  "runtime error: index out of range [:1] with length 0",
		Result: classifier.Classify(classifier.Failure{Kind: classifier.KindPanic}),
	}
	req := repair.NewRepair("text", "upper", `{"role":"text"}`, "func Upper(s string) string", failed)
	fmt.Println(req.Trigger, req.ProviderKind(), req.Validate())
	// Output: repair:intrinsic repair <nil>
}
