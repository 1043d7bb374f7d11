package wasm

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/artifactforge/forge/sandbox"
)

type humanEvalProblem struct {
	TaskID            string `json:"task_id"`
	Prompt            string `json:"prompt"`
	CanonicalSolution string `json:"canonical_solution"`
	TestSetup         string `json:"test_setup"`
	ExampleTest       string `json:"example_test"`
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

// TestHumanEval runs HumanEval-X Go problems' prompt + canonical solution against their example
// test compiled into the module (real testing and testify inside wasm), through sandbox.Tester as
// forge test does. The default run takes the first 3 problems; FORGE_WASM_FULL=1 runs all 164.
func TestHumanEval(t *testing.T) {
	problems := loadHumanEval(t)
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
