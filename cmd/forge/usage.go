package main

import (
	"strings"

	"github.com/spf13/cobra"
)

// isCobraUsage recognises the errors cobra itself returns for a malformed command line (unknown
// command, wrong number of args), which have no type of their own.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "accepts ", "requires at least", "requires at most", "unknown flag", "unknown shorthand", "invalid argument", "flag needs an argument"} {
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
