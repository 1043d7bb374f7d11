package selector_test

import (
	"fmt"

	"github.com/artifactforge/forge/selector"
)

func ExampleDecide() {
	in := selector.Input{
		Role: "text",
		Artifact: selector.Artifact{
			SchemaVersion:       1,
			RuntimeVersion:      "1.2.0",
			Lifecycle:           selector.Durable,
			ContractFingerprint: "sha256:aaa",
			PromptVersion:       "v1",
			Health:              selector.Health{Successes: 12, ExtrinsicFailures: 30},
		},
		Current: selector.Current{
			SchemaVersion:       1,
			RuntimeVersion:      "1.3.0",
			ContractFingerprint: "sha256:aaa",
			PromptVersion:       "v2", // a new prompt never invalidates proven code
		},
		RepairsLeft: 3,
	}
	fmt.Println(selector.Decide(in))

	in.Current.ContractFingerprint = "sha256:bbb" // the contract changed
	fmt.Println(selector.Decide(in))

	in.RepairsLeft = 0
	fmt.Println(selector.Decide(in))

	in.Artifact.Lifecycle = selector.Blessed
	fmt.Println(selector.Decide(in))

	in.Artifact.Lifecycle = selector.Quarantined
	d := selector.Decide(in)
	fmt.Println(d)
	fmt.Println(d.Hint("text", "upper"))
	// Output:
	// execute:healthy
	// repair:stale_contract
	// regenerate:budget_exhausted (stale_contract)
	// execute:blessed (stale_contract)
	// refuse:quarantined (stale_contract)
	// text.upper is quarantined: run `forge rollback text upper` to restore an earlier generation, or `forge regen text upper` to generate a new one; if the quarantine was a mistake, `forge quarantine lift text upper` puts the code back in service once the gate has passed it again
}

func ExampleHealth_Degraded() {
	outage := selector.Health{Successes: 3, ExtrinsicFailures: 97}
	buggy := selector.Health{Successes: 3, IntrinsicFailures: 2, AdaptiveFailures: 1}
	fmt.Println(outage.Degraded(selector.DefaultHealthPolicy), buggy.Degraded(selector.DefaultHealthPolicy))
	// Output: false true
}
