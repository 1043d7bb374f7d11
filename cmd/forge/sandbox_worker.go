package main

import (
	"github.com/spf13/cobra"

	"github.com/artifactforge/forge/sandbox/yaegi"
)

func init() {
	register(func(a *app) *cobra.Command {
		return &cobra.Command{
			Use:    "sandbox-worker",
			Short:  "Serve isolated sandbox calls on stdin/stdout (started by the sandbox itself)",
			Hidden: true,
			Args:   exactArgs(0),
			RunE: func(cmd *cobra.Command, _ []string) error {
				return yaegi.ServeWorker(cmd.InOrStdin(), a.stdout)
			},
		}
	})
}
