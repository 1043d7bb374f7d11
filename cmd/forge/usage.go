package main

import (
	"fmt"
	"math"
	"strings"

	"github.com/spf13/cobra"

	"github.com/artifactforge/forge/registry"
)

// isCobraUsage recognises the errors cobra itself returns for a malformed command line (unknown
// command, wrong number of args), which have no type of their own.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "accepts ", "requires at least", "requires at most", "unknown flag", "unknown shorthand", "invalid argument", "flag needs an argument", "required flag(s)", "if any flags in the group"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// exactArgs is cobra.ExactArgs with a usage error that names the expected form.
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("%s: want %d argument(s), got %d; usage: %s", cmd.Name(), n, len(args), cmd.UseLine())
		}
		return nil
	}
}

// nameArgs checks the argument count like exactArgs (between min and max) and that the first
// names are a valid role and method: a bad name is the caller's misuse of the command line (exit
// 2), caught before anything is opened.
func nameArgs(min, max int, kinds ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < min || len(args) > max {
			want := fmt.Sprintf("%d", min)
			switch {
			case max == math.MaxInt:
				want = fmt.Sprintf("at least %d", min)
			case max != min:
				want = fmt.Sprintf("%d to %d", min, max)
			}
			return usagef("%s: want %s argument(s), got %d; usage: %s", cmd.Name(), want, len(args), cmd.UseLine())
		}
		for i, k := range kinds {
			if i < len(args) {
				if err := registry.ValidateName(k, args[i]); err != nil {
					return usagef("%s: %v", cmd.Name(), err)
				}
			}
		}
		return nil
	}
}
