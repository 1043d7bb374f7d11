package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/artifactforge/forge/sandbox"
)

// testReport is forge test's --json output.
type testReport struct {
	OK      bool                 `json:"ok"` // every test passed
	Results []sandbox.TestResult `json:"results"`
	Passed  int                  `json:"passed"`
	Failed  int                  `json:"failed"`
}

func init() {
	register(func(a *app) *cobra.Command {
		var f sandboxFlags
		cmd := &cobra.Command{
			Use:   "test FILE TESTFILE",
			Short: "Run Go acceptance tests (testing + testify) against a file in the sandbox",
			Long: `Test runs every TestXxx(t *testing.T) in TESTFILE against the code in FILE, inside the sandbox,
with testify's assert and require available. It prints each test's outcome and ends with the line
"N passed, M failed"; the exit status is 1 if any test failed.`,
			Example: `  forge test has_close_elements.go has_close_elements_test.go`,
			Args:    exactArgs(2),
			RunE: func(cmd *cobra.Command, argv []string) error {
				in, err := f.input()
				if err != nil {
					return err
				}
				code, err := readSource(argv[0], cmd.InOrStdin())
				if err != nil {
					return err
				}
				tests, err := readSource(argv[1], cmd.InOrStdin())
				if err != nil {
					return err
				}
				sb, err := a.newSandbox(&f, &in)
				if err != nil {
					return err
				}
				defer sb.Close()
				ctx := cmd.Context()
				if ctx == nil {
					ctx = context.Background()
				}
				rep, err := runTests(ctx, sb, code, tests, in)
				if err != nil {
					return codedError{exitFailed, err}
				}
				return a.printTests(rep)
			},
		}
		f.register(cmd)
		return cmd
	})
}

// runTests is forge test's whole logic: the HumanEval check in sandbox/yaegi goes through the same
// Tester call.
func runTests(ctx context.Context, sb sandbox.Sandbox, code, tests string, in sandbox.Input) (testReport, error) {
	tester, ok := sb.(sandbox.Tester)
	if !ok {
		return testReport{}, fmt.Errorf("sandbox %T cannot run acceptance tests", sb)
	}
	results, err := tester.Test(ctx, sandbox.Source{Code: code}, tests, in)
	if err != nil {
		return testReport{}, err
	}
	rep := testReport{Results: results}
	for _, r := range results {
		if r.Passed {
			rep.Passed++
		} else {
			rep.Failed++
		}
	}
	return rep, nil
}

func (a *app) printTests(rep testReport) error {
	rep.OK = rep.Failed == 0
	if a.jsonOut {
		if err := a.printJSON(rep); err != nil {
			return err
		}
	} else {
		for _, r := range rep.Results {
			status := "PASS"
			if !r.Passed {
				status = "FAIL"
			}
			fmt.Fprintf(a.stdout, "--- %s: %s (%v)\n", status, r.Name, r.Duration.Round(10_000))
			if !r.Passed && r.Message != "" {
				for _, l := range strings.Split(r.Message, "\n") {
					fmt.Fprintf(a.stdout, "    %s\n", l)
				}
			}
		}
		fmt.Fprintf(a.stdout, "%d passed, %d failed\n", rep.Passed, rep.Failed)
	}
	if rep.Failed > 0 {
		return codedError{exitFailed, fmt.Errorf("%d of %d tests failed", rep.Failed, rep.Passed+rep.Failed)}
	}
	return nil
}
