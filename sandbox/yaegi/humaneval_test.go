package yaegi

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/artifactforge/forge/sandbox"
)

type humanEvalProblem struct {
	TaskID            string `json:"task_id"`
	Prompt            string `json:"prompt"`
	CanonicalSolution string `json:"canonical_solution"`
	TestSetup         string `json:"test_setup"`
	ExampleTest       string `json:"example_test"`
}

func allPassed(res []sandbox.TestResult) bool {
	for _, r := range res {
		if !r.Passed {
			return false
		}
	}
	return true
}

func loadHumanEval(t testing.TB) []humanEvalProblem {
	f, err := os.Open("../testdata/humaneval/problems.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ps []humanEvalProblem
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var p humanEvalProblem
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	return ps
}

// orderDependent are the HumanEval-X problems whose canonical solution answers differently
// depending on map iteration order, so their example test fails now and then natively too. Each
// is held to a deterministic pass with an order-independent fix of the solution (what the count
// reports), while the canonical solution still has to run cleanly in the sandbox: orderRuns runs,
// no compile or run error, failures only in assertions. How many of those runs passed is logged.
var orderDependent = map[string]struct{ reason, fixed string }{
	"Go/95": {
		reason: "canonical CheckDictCase stops after the second key, so {p, A, B} is upper or mixed by iteration order",
		fixed: `    if len(dict) == 0 {
        return false
    }
    upper, lower := 0, 0
    for k := range dict {
        key, ok := k.(string)
        if !ok {
            return false
        }
        if key == strings.ToUpper(key) {
            upper++
        } else if key == strings.ToLower(key) {
            lower++
        } else {
            return false
        }
    }
    return upper == len(dict) || lower == len(dict)
}
`,
	},
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
	problems := loadHumanEval(t)
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
		od, isOD := orderDependent[p.TaskID]
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
			flaky = append(flaky, fmt.Sprintf("%s canonical passed %d/%d runs (%s)", p.TaskID, passes, orderRuns, od.reason))
			code = p.Prompt + od.fixed
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
