package yaegi

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/sandboxtest"
)

func allPassed(res []sandbox.TestResult) bool {
	for _, r := range res {
		if !r.Passed {
			return false
		}
	}
	return true
}

const orderRuns = 20

// failures returns the failed tests' messages, or the error.
func failures(res []sandbox.TestResult, err error) string {
	if err != nil {
		return err.Error()
	}
	var msg string
	for _, r := range res {
		if !r.Passed {
			msg += r.Name + ": " + r.Message
		}
	}
	return msg
}

// TestHumanEval runs every HumanEval-X Go problem's prompt + canonical solution against its
// example test inside the sandbox, through sandbox.Tester (what forge test calls).
func TestHumanEval(t *testing.T) {
	problems := sandboxtest.LoadHumanEval(t)
	if len(problems) != 164 {
		t.Fatalf("want 164 problems, got %d", len(problems))
	}
	sb := New(Options{})
	defer sb.Close()
	ctx := context.Background()
	canonical, fixed, vacuous := 0, 0, 0
	var failed, flaky []string
	for _, p := range problems {
		tests := p.TestSetup + "\n" + p.ExampleTest
		code := p.Prompt + p.CanonicalSolution
		od, isOD := sandboxtest.OrderDependent[p.TaskID]
		if isOD {
			passes := 0
			for range orderRuns {
				res, err := sb.Test(ctx, sandbox.Source{Code: code}, tests, sandbox.Input{})
				if err != nil || len(res) == 0 {
					t.Errorf("%s canonical: the sandbox must run it cleanly: %s", p.TaskID, failures(res, err))
					break
				}
				if allPassed(res) {
					passes++
				}
			}
			flaky = append(flaky, fmt.Sprintf("%s canonical passed %d/%d runs (%s)", p.TaskID, passes, orderRuns, od.Reason))
			code = p.Prompt + od.Solution
		}
		res, err := sb.Test(ctx, sandbox.Source{Code: code}, tests, sandbox.Input{})
		if msg := failures(res, err); msg != "" {
			failed = append(failed, p.TaskID)
			t.Errorf("%s: %s", p.TaskID, strings.ReplaceAll(msg, "\n", " | "))
			continue
		}
		if len(res) == 0 {
			vacuous++ // an empty example_test: compiled and loaded, nothing to assert
		}
		if isOD {
			fixed++
		} else {
			canonical++
		}
	}
	t.Logf("HumanEval-X Go: %d/%d passed: %d canonical + %d with an order-independent fix (%s); %d with an empty example_test (compiled only); failed: %v",
		canonical+fixed, len(problems), canonical, fixed, strings.Join(flaky, "; "), vacuous, failed)
}
