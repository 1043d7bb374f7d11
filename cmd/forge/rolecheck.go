package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/registry"
)

// contractMaxima are the operator's maxima of contract limits ($FORGE_MAX_MEMORY,
// $FORGE_MAX_TIMEOUT, $FORGE_MAX_OUTPUT; forge.OptionsFromEnv), which role add and role check
// hold every contract to.
func contractMaxima() (registry.Maxima, error) {
	opts, err := forge.OptionsFromEnv(os.Getenv)
	if err != nil {
		return registry.Maxima{}, usagef("%v", err)
	}
	return opts.Maxima, nil
}

// checkedContract is the contract role add and role check read from -f FILE (or --role and
// --purpose), with every problem registry.CheckContract finds in it.
func checkedContract(file, role, purpose string, stdin func() ([]byte, error)) (registry.Contract, []registry.Problem, error) {
	max, err := contractMaxima()
	if err != nil {
		return registry.Contract{}, nil, err
	}
	if file == "" {
		c := registry.Contract{Role: role, Purpose: purpose}
		return c, c.Check(max), nil
	}
	data, err := stdin()
	if err != nil {
		return registry.Contract{}, nil, err
	}
	c, ps := registry.CheckContract(data, max)
	return c, ps, nil
}

// checkReport is role check's (and role add --dry-run's) --json output.
type checkReport struct {
	OK       bool               `json:"ok"`
	Role     string             `json:"role"`
	Problems []registry.Problem `json:"problems"`
	Maxima   maximaJSON         `json:"maxima"`
}

type maximaJSON struct {
	Memory  int64  `json:"memory_bytes"`
	Timeout string `json:"timeout"`
	Output  int64  `json:"output_bytes"`
}

// reportCheck prints a check's outcome; with problems it is a failure (exit 1) naming each one.
func reportCheck(a *app, what string, c registry.Contract, ps []registry.Problem, again string) error {
	if a.jsonOut {
		max, _ := contractMaxima()
		max = max.WithDefaults()
		if ps == nil {
			ps = []registry.Problem{}
		}
		if err := a.printJSON(checkReport{OK: len(ps) == 0, Role: c.Role, Problems: ps,
			Maxima: maximaJSON{max.Memory, max.Timeout.String(), max.Output}}); err != nil {
			return err
		}
		if len(ps) > 0 {
			return codedError{exitFailed, fmt.Errorf("%s: %d problem(s)", what, len(ps))}
		}
		return nil
	}
	if len(ps) == 0 {
		fmt.Fprintf(a.stdout, "%s: role %s is a valid contract; nothing was written\n", what, c.Role)
		return nil
	}
	fmt.Fprintf(a.stdout, "%s: %d problem(s):\n", what, len(ps))
	for _, p := range ps {
		field := p.Field
		if field == "" {
			field = "contract"
		}
		fmt.Fprintf(a.stdout, "  %s: %s\n", field, p.Message)
	}
	return fmt.Errorf("%s: %d problem(s) (listed above); fix the contract and run `%s` again", what, len(ps), again)
}

func newRoleCheckCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "check FILE",
		Short: "Check a role contract without writing it: every problem role add would refuse it for",
		Long: `Check reads a contract (- for stdin) and lists every problem role add would refuse it for, not
just the first: unknown fields and capabilities, a method whose signature declares another function
than the method's (wordcount must be func Wordcount), acceptance examples whose args do not fit the
signature or whose expected value does not fit the deliverable schema, limits over the operator's
maxima ($FORGE_MAX_MEMORY, $FORGE_MAX_TIMEOUT, $FORGE_MAX_OUTPUT). Nothing is written and no
model is asked. Exit 0: the contract may be added; exit 1: problems, listed.`,
		Example: `  forge role check examples/contracts/text.json`,
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ps, err := checkedContract(args[0], "", "", func() ([]byte, error) { return readInput(args[0], cmd.InOrStdin()) })
			if err != nil {
				return err
			}
			return reportCheck(a, args[0], c, ps, "forge role check "+args[0])
		},
	}
}
