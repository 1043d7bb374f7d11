package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/registry"
)

func init() {
	register(newReplayCmd)
	register(newSampleCmd)
}

// printReplay says what replaying the sample of real calls on new code found, with the answers
// that differ.
func printReplay(a *app, r *forge.Replay) {
	if r == nil {
		return
	}
	fmt.Fprintf(a.stdout, "  %s of generation %d\n", r.Summary(), r.Gen)
	for _, d := range r.Diffs {
		fmt.Fprintf(a.stdout, "    %s: %s\n", d.Kind, d)
	}
}

// printHistoryReplays adds, under `forge history`'s table, what each generation's replay of its
// predecessor's sample found.
func printHistoryReplays(a *app, hist []registry.Generation) {
	for _, g := range hist {
		if g.Replay != nil {
			fmt.Fprintf(a.stdout, "%s: %s\n", g.ID, forge.ReplaySummaryLine(g.Replay))
		}
	}
}

func newReplayCmd(a *app) *cobra.Command {
	var gen int
	cmd := &cobra.Command{
		Use:   "replay ROLE METHOD",
		Short: "Replay the artifact's sample of real calls on a generation and report how far the answers agree",
		Long: `Replay runs the inputs the artifact's sample of real calls keeps (recent distinct inputs with the
answers the current generation gave) on the current code, or with --gen N on a generation its history
keeps, and reports the answers that agree and those that differ. Nothing is stored.`,
		Args: nameArgs(2, 2, "role", "method"),
		RunE: func(_ *cobra.Command, args []string) error {
			f, err := a.openForge()
			if err != nil {
				return err
			}
			defer a.closeForge(f)
			ctx, cancel := signalContext()
			defer cancel()
			r, err := f.ReplaySample(ctx, args[0], args[1], gen)
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(struct { // an action that runs code: an object with "ok"
					OK bool `json:"ok"`
					*forge.Replay
				}{true, r})
			}
			fmt.Fprintf(a.stdout, "%s.%s: %d of %d sampled answers agree\n", args[0], args[1], r.Same, r.Replayed)
			printReplay(a, r)
			return nil
		},
	}
	cmd.Flags().IntVar(&gen, "gen", 0, "replay on this kept generation (default: the current one)")
	return cmd
}

func newSampleCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sample ROLE METHOD",
		Short: "Show the sample of real calls an artifact keeps (inputs and answers); `sample purge` drops it",
		Args:  nameArgs(2, 2, "role", "method"),
		RunE: func(_ *cobra.Command, args []string) error {
			art, err := a.loadArtifact(args[0], args[1])
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(art.Sample)
			}
			fmt.Fprintf(a.stdout, "%s.%s keeps %d sampled call(s), %d bytes, answered by generation %d\n", args[0], args[1], len(art.Sample), registry.SampleBytes(art.Sample), art.Generation)
			for _, e := range art.Sample {
				e = e.Canonical()
				if e.Err != "" {
					fmt.Fprintf(a.stdout, "  args %s: error %q\n", e.Args, e.Err)
				} else {
					fmt.Fprintf(a.stdout, "  args %s: %s\n", e.Args, e.Value)
				}
			}
			return nil
		},
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "purge ROLE METHOD",
		Short: "Drop the sample of real calls an artifact keeps (new calls add to it again unless the contract turns it off)",
		Args:  nameArgs(2, 2, "role", "method"),
		RunE: func(_ *cobra.Command, args []string) error {
			return a.operator(args, func(ctx context.Context, f *forge.Forge) error { return f.PurgeSample(ctx, args[0], args[1]) }, "sample purged")
		},
	})
	return cmd
}
