package main

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/artifactforge/forge/forge"
)

func init() { register(newStatsCmd) }

func newStatsCmd(a *app) *cobra.Command {
	var since string
	cmd := &cobra.Command{
		Use:   "stats [--since 24h]",
		Short: "What reuse bought: calls served by persisted code, provider calls and tokens saved, repairs, failures, latency",
		Args:  exactArgs(0),
		RunE: func(*cobra.Command, []string) error {
			var from time.Time
			if since != "" {
				d, err := forge.ParseAge(since)
				if err != nil {
					return usagef("--since %v", err)
				}
				from = time.Now().Add(-d)
			}
			s, err := a.openStoreRO()
			if err != nil {
				return err
			}
			defer s.Close()
			st, err := forge.StoreStats(s.LocalDir(), from)
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(st)
			}
			o := st.Overall
			if o.Calls == 0 && o.OperatorActions == 0 {
				fmt.Fprintln(a.stdout, "no calls in the event log yet")
				return nil
			}
			fmt.Fprintf(a.stdout, "calls %d (ok %d): persisted %d, generated %d, repaired %d, regenerated %d\n",
				o.Calls, o.OK, o.Persisted, o.Generated, o.Repaired, o.Regenerated)
			fmt.Fprintf(a.stdout, "reuse hit rate %.1f%%, model calls per 1,000 calls %.1f (%d provider calls, %d saved, ~%d tokens saved)\n",
				100*o.ReuseHitRate, o.ModelCallsPer1000, o.ProviderCalls, o.ProviderCallsSaved, o.TokensSavedEstimate)
			fmt.Fprintf(a.stdout, "tokens spent: %d in, %d out (%d cached)\n", o.Tokens.InputTokens, o.Tokens.OutputTokens, o.Tokens.CachedTokens)
			fmt.Fprintf(a.stdout, "repairs %d, succeeded %.0f%%; regeneration rate %.1f%%; operator actions %d\n",
				o.RepairsAttempted, 100*o.RepairSuccessRate, 100*o.RegenerationRate, o.OperatorActions)
			if len(o.OperatorActionsByAction) > 0 {
				fmt.Fprint(a.stdout, "operator actions:")
				for _, k := range slices.Sorted(maps.Keys(o.OperatorActionsByAction)) {
					fmt.Fprintf(a.stdout, " %s %d", k, o.OperatorActionsByAction[k])
				}
				fmt.Fprintln(a.stdout)
			}
			if st.EventsDropped > 0 {
				fmt.Fprintf(a.stdout, "events dropped: %d log line(s) were not written (the log's \"dropped\" records): these figures miss them\n", st.EventsDropped)
			}
			if st.RecordsOnly > 0 {
				fmt.Fprintf(a.stdout, "records: %d generation(s), repair(s) and operator action(s) from events/records.jsonl, whose lines the event log rotated away, are counted; calls that persisted code served before %s are not (the log kept them only until it rotated)\n",
					st.RecordsOnly, fmtTime(&st.LogSince))
			}
			if len(o.Failures) > 0 {
				keys := make([]string, 0, len(o.Failures))
				for k := range o.Failures {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				fmt.Fprint(a.stdout, "failures:")
				for _, k := range keys {
					fmt.Fprintf(a.stdout, " %s %d", k, o.Failures[k])
				}
				fmt.Fprintln(a.stdout)
			}
			for _, src := range []string{forge.SourcePersisted, forge.SourceGenerated, forge.SourceRepaired, forge.SourceRegenerated, ""} {
				if l, ok := o.Latency[src]; ok {
					name := src
					if name == "" {
						name = "no program"
					}
					fmt.Fprintln(a.stdout, latencyLine(name, l))
				}
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "\nROLE\tMETHOD\tCALLS\tREUSE\tPROVIDER CALLS\tREPAIRS\tFAILED")
			for _, m := range st.Methods {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f%%\t%d\t%d\t%d\n", m.Role, m.Method, m.Calls, 100*m.ReuseHitRate, m.ProviderCalls, m.RepairsAttempted, m.Calls-m.OK)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&since, "since", "", "only calls within this age (e.g. 24h, 7d; default: the whole log)")
	return cmd
}

// latencyLine is one latency line of `forge stats`, in the units fmtDur picks (it printed Go's
// nanosecond precision: "p50 318.767104ms").
func latencyLine(name string, l forge.Latency) string {
	return fmt.Sprintf("latency %s: p50 %s, p99 %s (%d calls)", name, fmtDur(l.P50), fmtDur(l.P99), l.Calls)
}
