package wasm

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/sandboxtest"
)

// TestHumanEval runs HumanEval-X Go problems' prompt + canonical solution against their example
// test compiled into the module (real testing and testify inside wasm), through sandbox.Tester as
// forge test does. The default run takes the first 3 problems; FORGE_WASM_FULL=1 runs all 164.
func TestHumanEval(t *testing.T) {
	problems := sandboxtest.LoadHumanEval(t)
	if len(problems) != 164 {
		t.Fatalf("want 164 problems, got %d", len(problems))
	}
	if !full() {
		problems = problems[:3]
	}
	start := time.Now()
	passed, vacuous := 0, 0
	var failed []string
	for _, p := range problems {
		code := p.Prompt + p.CanonicalSolution
		tests := p.TestSetup + "\n" + p.ExampleTest
		res, err := shared.Test(context.Background(), sandbox.Source{Code: code}, tests, sandbox.Input{})
		ok := err == nil
		if ok && len(res) == 0 {
			vacuous++
		}
		var msg string
		if err != nil {
			msg = err.Error()
		}
		for _, r := range res {
			if !r.Passed {
				ok = false
				msg += r.Name + ": " + r.Message
			}
		}
		if ok {
			passed++
		} else {
			failed = append(failed, p.TaskID)
			t.Errorf("%s: %s", p.TaskID, strings.ReplaceAll(msg, "\n", " | "))
		}
	}
	t.Logf("HumanEval-X Go (wasm): %d/%d passed (%d with an empty example_test: built only) in %v; failed: %v",
		passed, len(problems), vacuous, time.Since(start).Round(time.Millisecond), failed)
}
