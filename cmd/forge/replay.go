package main

import (
	"fmt"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/registry"
)

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
