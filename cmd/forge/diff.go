package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/artifactforge/forge/forge"
)

func init() { register(newDiffCmd) }

// exitDiffers is `forge diff`'s exit code when some sampled input's answer differs between the
// two generations (0: every sampled answer agrees; 1: the diff could not be made; 2: usage).
const exitDiffers = 3

func newDiffCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "diff ROLE METHOD [GEN GEN]",
		Short: "Show how two kept generations differ: their code, and their answers on the sample of real calls",
		Long: `Diff shows the unified diff of two kept generations' code (default: the previous and the current
one) and replays the artifact's sample of real calls on both: each input whose answers differ is
shown with both answers (changed, now_succeeds, now_fails). Nothing is stored.

Exit codes: 0 every sampled answer agrees (the code may differ), 3 some sampled answer differs,
1 the diff could not be made (a generation not kept, code that does not compile), 2 usage.`,
		Args: nameArgs(2, 4, "role", "method"),
		RunE: func(_ *cobra.Command, args []string) error {
			if len(args) == 3 {
				return usagef("diff: give two generations or none (default: the previous and the current one); usage: forge diff ROLE METHOD [GEN GEN]")
			}
			var gens [2]int
			for i, g := range args[2:] {
				n, err := strconv.Atoi(strings.TrimPrefix(g, "gen-"))
				if err != nil || n <= 0 {
					return usagef("diff: GEN %q is not a generation number (e.g. 2 or gen-2; see `forge history %s %s`)", g, args[0], args[1])
				}
				gens[i] = n
			}
			f, err := a.openForge()
			if err != nil {
				return err
			}
			defer a.closeForge(f)
			ctx, cancel := signalContext()
			defer cancel()
			d, err := f.Diff(ctx, args[0], args[1], gens[0], gens[1])
			if err != nil {
				return err
			}
			if a.jsonOut {
				if err := a.printJSON(struct { // an action that runs code: an object with "ok" (the diff was made)
					OK bool `json:"ok"`
					*forge.DiffReport
				}{true, d}); err != nil {
					return err
				}
			} else {
				printDiff(a, d)
			}
			if d.Differs() {
				return codedError{exitDiffers, fmt.Errorf("%s.%s: gen-%d and gen-%d answer %d sampled input(s) differently", args[0], args[1], d.From, d.To, d.Changed+d.NowSucceeds+d.NowFails)}
			}
			return nil
		},
	}
}

func printDiff(a *app, d *forge.DiffReport) {
	if d.Code == "" {
		fmt.Fprintf(a.stdout, "gen-%d and gen-%d have the same code\n", d.From, d.To)
	} else {
		fmt.Fprint(a.stdout, d.Code)
	}
	fmt.Fprintf(a.stdout, "\n%s\n", d.Summary())
	for _, x := range d.Diffs {
		fmt.Fprintf(a.stdout, "  %s: %s\n", x.Kind, x)
	}
}
