package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/artifactforge/forge/forge"
)

func init() { register(newToolsCmd) }

// defineSwitchFlags adds --allow-define-roles and --allow-redefine-roles to cmd (`forge serve`,
// `forge mcp`) and returns the switches they and $FORGE_ALLOW_DEFINE_ROLES give, read when run.
func defineSwitchFlags(cmd *cobra.Command) func() (forge.DefineSwitches, error) {
	var allow, redefine bool
	cmd.Flags().BoolVar(&allow, "allow-define-roles", false, "let clients define roles (forge_define_role, POST /v1/roles) and change their own; with --clients, only clients with define_roles: true (default $FORGE_ALLOW_DEFINE_ROLES=1)")
	cmd.Flags().BoolVar(&redefine, "allow-redefine-roles", false, "with --allow-define-roles, let clients change roles others defined too (default $FORGE_ALLOW_DEFINE_ROLES=all)")
	return func() (forge.DefineSwitches, error) {
		sw, err := forge.DefineSwitchesFromEnv(os.Getenv)
		if err != nil {
			return sw, usagef("%v", err)
		}
		if redefine && !allow && !sw.Allow {
			return sw, usagef("--allow-redefine-roles needs --allow-define-roles")
		}
		sw.Allow, sw.Redefine = sw.Allow || allow, sw.Redefine || redefine
		return sw, nil
	}
}

func newToolsCmd(a *app) *cobra.Command {
	var format, role string
	cmd := &cobra.Command{
		Use:   "tools [--format mcp|openai|anthropic] [--role R]",
		Short: "Print the methods as tool definitions for an agent framework",
		Long: `Tools prints one tool definition per declared method of every role (or of --role R), as an
agent framework takes them: --format mcp (the MCP tools/list entries, with outputSchema and
annotations), openai (a Chat Completions "tools" array of function tools; strict: true with every
object closed and every property required, unless a parameter cannot be said in strict mode, e.g.
a map), or anthropic (a Messages "tools" array with input_schema). Descriptions and schemas come
from the contracts (their docs: descriptions per method and parameter, examples) and do not change
when code is regenerated. A model's tool call named role__method goes to role.method:
` + "`forge call ROLE METHOD ARGS`" + ` or POST /v1/call/{role}/{method} with the arguments as the body.
` + "`forge serve`" + ` serves the same at GET /v1/tools?format=...&role=...`,
		Example: `  forge tools --format openai > tools.json
  forge tools --format anthropic --role text`,
		Args: exactArgs(0),
		RunE: func(*cobra.Command, []string) error {
			f, err := a.openForge()
			if err != nil {
				return err
			}
			defer a.closeForge(f)
			specs, err := f.ToolSpecs(role)
			if err != nil {
				return err
			}
			v, err := forge.ToolsAs(specs, format)
			if err != nil {
				return usagef("tools: --format: %v", err)
			}
			return a.printJSON(v)
		},
	}
	cmd.Flags().StringVar(&format, "format", forge.ToolsMCP, "mcp, openai or anthropic")
	cmd.Flags().StringVar(&role, "role", "", "only this role's methods")
	return cmd
}
