package sandboxtest

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// HumanEvalProblem is one line of sandbox/testdata/humaneval/problems.jsonl (see its README).
type HumanEvalProblem struct {
	TaskID            string `json:"task_id"`
	Prompt            string `json:"prompt"`
	Import            string `json:"import"`
	Docstring         string `json:"docstring"`
	Declaration       string `json:"declaration"`
	CanonicalSolution string `json:"canonical_solution"`
	TestSetup         string `json:"test_setup"`
	ExampleTest       string `json:"example_test"`
}

// HumanEvalPath is the checked-in copy of the HumanEval-X Go problems.
func HumanEvalPath() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata", "humaneval", "problems.jsonl")
}

// LoadHumanEval reads all 164 problems, in file order.
func LoadHumanEval(tb testing.TB) []HumanEvalProblem {
	tb.Helper()
	f, err := os.Open(HumanEvalPath())
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var ps []HumanEvalProblem
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<20)
	for sc.Scan() {
		var p HumanEvalProblem
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			tb.Fatal(err)
		}
		ps = append(ps, p)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return ps
}

// OrderFix replaces a canonical solution whose answer depends on map iteration order.
type OrderFix struct {
	Reason   string
	Solution string // replaces canonical_solution (the body after the declaration)
}

// OrderDependent are the HumanEval-X problems whose canonical solution answers differently
// depending on map iteration order, so their example test fails now and then, natively too.
var OrderDependent = map[string]OrderFix{
	"Go/95": {
		Reason: "canonical CheckDictCase stops after the second key, so {p, A, B} is upper or mixed by iteration order",
		Solution: `    if len(dict) == 0 {
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
