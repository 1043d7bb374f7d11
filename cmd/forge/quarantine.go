package main

import (
	"context"
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/registry"
)

func init() { register(newQuarantineCmd) }

// newQuarantineCmd is two things under one name: the operator verb `forge quarantine ROLE METHOD`
// (refuse an artifact's calls) and the subcommands `ls`, `restore ID` and `dismiss ID` for the
// files the store moved to quarantine/ because they were damaged. Subcommands take precedence: a
// role named ls, restore or dismiss is quarantined with `forge quarantine -- ls METHOD`.
func newQuarantineCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "quarantine (ROLE METHOD | lift ROLE METHOD | ls | restore ID | dismiss ID)",
		Short: "Refuse an artifact's calls (ROLE METHOD) or lift that (lift); list, restore or dismiss damaged files the store quarantined",
		Long: `forge quarantine ROLE METHOD refuses calls of an artifact until it is rolled back,
regenerated or lifted (an operator's decision):
  forge quarantine lift ROLE METHOD   the way back from a mistaken quarantine, for any generation
                                 (the first one too): the gate checks the current code again
                                 against the role's contract and, if it passes, the artifact is a
                                 candidate that calls run again; if not, the quarantine stands

The store moves a damaged file (an artifact or role that does not parse, or was edited by hand)
to quarantine/ on its own, restoring a role from its last-good copy; forge doctor fails until each
such entry is dealt with:
  forge quarantine ls            list the entries, why, and what was restored in their place
  forge quarantine restore ID    put the file back (a hand edit is taken over: an artifact's edited
                                 code as a new candidate generation, a role's contract with a new
                                 fingerprint)
  forge quarantine dismiss ID    keep the store as it is and stop reporting the entry
Entries are never deleted: restored and dismissed ones move to quarantine/resolved/.
The subcommands take precedence over role names: quarantine a role named lift, ls, restore or
dismiss with ` + "`forge quarantine -- ls METHOD`.",
		Args: nameArgs(2, 2, "role", "method"),
		RunE: func(_ *cobra.Command, args []string) error {
			return a.operator(args, func(ctx context.Context, f *forge.Forge) error { return f.QuarantineContext(ctx, args[0], args[1]) },
				fmt.Sprintf("quarantined: its calls are refused; if this was a mistake, `forge quarantine lift %s %s` puts it back once the gate passes its code again", args[0], args[1]))
		},
	}
	ls := &cobra.Command{
		Use:   "ls",
		Short: "List the damaged files the store moved to quarantine/ and not yet restored or dismissed",
		Args:  exactArgs(0),
		RunE: func(*cobra.Command, []string) error {
			s, m, err := a.openMaintainer(true)
			if err != nil {
				return err
			}
			defer s.Close()
			q, err := m.Quarantined()
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(q)
			}
			if len(q) == 0 {
				fmt.Fprintf(a.stdout, "nothing in quarantine in %s\n", s.Location())
				return nil
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tWHAT\tWHEN\tWHY\tRESTORED IN ITS PLACE")
			for _, e := range q {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e.ID, quarantineWhat(e), fmtTime(&e.At), oneLine(shortReason(e.Reason), 100), orDash(e.Restored))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			fmt.Fprintln(a.stdout, "restore one with `forge quarantine restore ID`, or keep the store as it is with `forge quarantine dismiss ID`")
			return nil
		},
	}
	var restoreOpts, liftOpts forge.PromoteOptions
	restore := &cobra.Command{
		Use:   "restore ID",
		Short: "Put a quarantined file back (a hand edit is taken over); see `forge quarantine ls`",
		Args:  exactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			f, err := a.openForge()
			if err != nil {
				return err
			}
			defer a.closeForge(f)
			rr, err := f.RestoreQuarantinedWith(operatorCtx(context.Background()), args[0], restoreOpts)
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(struct {
					OK bool `json:"ok"`
					forge.Restored
				}{true, rr})
			}
			fmt.Fprintf(a.stdout, "%s: %s\n", rr.Action, rr.Detail)
			printStale(a, rr.Stale)
			return nil
		},
	}
	dismiss := &cobra.Command{
		Use:   "dismiss ID",
		Short: "Keep the store as it is and stop reporting a quarantined file (it stays in quarantine/resolved/)",
		Args:  exactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			f, err := a.openForge()
			if err != nil {
				return err
			}
			defer a.closeForge(f)
			s := f.Store()
			e, err := f.DismissQuarantined(operatorCtx(context.Background()), args[0])
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(map[string]any{"ok": true, "dismissed": e})
			}
			fmt.Fprintf(a.stdout, "dismissed %s (%s); the file is kept in %s/quarantine/resolved/\n", e.ID, quarantineWhat(e), s.Location())
			return nil
		},
	}
	lift := &cobra.Command{
		Use:   "lift ROLE METHOD",
		Short: "Lift an operator's quarantine after the gate passes the current code again (the way back from a mistake)",
		Args:  nameArgs(2, 2, "role", "method"),
		RunE: func(_ *cobra.Command, args []string) error {
			f, err := a.openForge()
			if err != nil {
				return err
			}
			defer a.closeForge(f)
			o := f.LiftQuarantineWith(operatorCtx(context.Background()), args[0], args[1], liftOpts)
			if a.jsonOut {
				if err := a.printJSON(o); err != nil {
					return err
				}
			}
			if !o.OK {
				return codedError{exitFailed, errors.New(o.Err.Message)}
			}
			if !a.jsonOut {
				fmt.Fprintf(a.stdout, "%s.%s quarantine lifted: the gate passed generation %d again; it is a candidate, and calls run it\n", args[0], args[1], o.Meta.ArtifactGen)
			}
			return nil
		},
	}
	restore.Flags().BoolVar(&restoreOpts.AcceptChanges, "accept-changes", false, "keep restored code even if it changes answers of the sample of real calls (shown when refused)")
	lift.Flags().BoolVar(&liftOpts.AcceptChanges, "accept-changes", false, "lift the quarantine even if the code changes answers of the sample of real calls (shown when refused)")
	cmd.AddCommand(ls, restore, dismiss, lift)
	return cmd
}

// quarantineWhat names what a quarantine entry held.
func quarantineWhat(e registry.QuarantineReport) string {
	switch e.Kind {
	case "artifact":
		return "artifact " + e.Role + "." + e.Method
	case "role":
		return "role " + e.Role
	case "registry":
		return "registry.json (older store)"
	}
	return e.Path
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
