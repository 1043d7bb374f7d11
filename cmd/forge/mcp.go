package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/mcp"
	"github.com/artifactforge/forge/server"
)

func init() { register(newMCPCmd) }

func newMCPCmd(a *app) *cobra.Command {
	var operator bool
	var defineRoles func() (forge.DefineSwitches, error)
	var modelCalls func() (forge.ModelCallBound, error)
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the forge to an agent over MCP (stdio)",
		Long: `Mcp serves the Model Context Protocol on stdin and stdout for an agent: every declared
method of every role is a tool (role__method) described by its contract (docs per method and
parameter), with an input schema from its Go signature and an output schema from its result; a
method whose code does not exist yet is written on its first call. forge_call calls any method;
forge_check_contract checks a contract; forge_define_role defines a role, only with
--allow-define-roles (or $FORGE_ALLOW_DEFINE_ROLES=1; a client may change the roles it defined,
and others' only with --allow-redefine-roles); forge_roles, forge_artifacts and forge_stats read
the store; --operator adds forge_bless, forge_quarantine, forge_lift, forge_rollback and
forge_regen. The tool list follows the store (watch mode): clients are sent
notifications/tools/list_changed. ` + "`forge serve`" + ` serves the same over streamable HTTP at /mcp.`,
		Args: exactArgs(0),
		RunE: func(*cobra.Command, []string) error {
			define, err := defineRoles() // --allow-define-roles (tools.go)
			if err != nil {
				return err
			}
			models, err := modelCalls()
			if err != nil {
				return err
			}
			// The agent on stdin is the one client (""): it may spend models per window.
			f, err := a.openForge(func(o *forge.Options) { o.ModelCalls = forge.ModelCallLimit{Default: models} })
			if err != nil {
				return err
			}
			defer a.closeForge(f)
			if err := f.Watch(); err != nil {
				a.stderr.Write([]byte("forge: " + err.Error() + "\n"))
			}
			s, err := mcp.New(f, mcp.Options{Version: buildVersion().String(), OperatorVerbs: operator, DefineRoles: define, CallTimeout: server.DefaultCallTimeout})
			if err != nil {
				return err
			}
			defer s.Close()
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
			defer stop()
			err = s.Run(ctx, newMCPStdio(os.Stdin, os.Stdout, a.stderr, ctx.Done()).transport())
			if ctx.Err() != nil {
				return nil // told to stop (SIGINT, SIGTERM): a normal end, not "context canceled"
			}
			return err
		},
	}
	defineRoles = defineSwitchFlags(cmd)
	modelCalls = modelCallsFlag(cmd)
	cmd.Flags().BoolVar(&operator, "operator", false, "add the operator tools (bless, quarantine, lift, rollback, regen)")
	return cmd
}
