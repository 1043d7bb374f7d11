package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/artifactforge/forge/forge"
)

func init() { register(newWatchCmd) }

func newWatchCmd(a *app) *cobra.Command {
	var fl forge.Filter
	var trace string
	cmd := &cobra.Command{
		Use:   "watch [--role R] [--method M] [--class C] [--source S] [--trace ID]",
		Short: "Follow calls and artifact changes as they happen, in every process using the store",
		Long: `Watch prints calls (from the store's event log, as any forge process writes them) and artifact
and role changes (a bless, quarantine, rollback, edit, new generation or contract, by any process)
as they happen: pushed by file-system notifications, not a poll. --class, --source and --trace
select calls only. --json prints one event per line. It runs until interrupted.`,
		Args: exactArgs(0),
		RunE: func(*cobra.Command, []string) error {
			if trace != "" {
				if err := fl.Trace.UnmarshalText([]byte(trace)); err != nil {
					return usagef("--trace %q is not a trace id (16 hex digits, as in the events)", trace)
				}
			}
			// A read-only command: a store that does not exist is an error, not a new one.
			s, err := a.openStoreRO()
			if err != nil {
				return err
			}
			if err := s.Close(); err != nil {
				return err
			}
			spec, err := a.storeDir() // the URL itself, not the redacted Location
			if err != nil {
				return err
			}
			f, err := forge.Open(forge.Options{Store: spec, NoEvents: true, LocalDir: localDir(), ClientName: a.clientName()})
			if err != nil {
				return err
			}
			defer a.closeForge(f)
			if err := f.Watch(); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
			defer stop()
			return watchLoop(ctx, a, f, fl, nil)
		},
	}
	cmd.Flags().StringVar(&fl.Role, "role", "", "only this role")
	cmd.Flags().StringVar(&fl.Method, "method", "", "only this method")
	cmd.Flags().StringVar(&fl.Class, "class", "", "only calls that failed with this class (intrinsic, extrinsic, adaptive, caller)")
	cmd.Flags().StringVar(&fl.Source, "source", "", "only calls served by this program source (persisted, generated, repaired, regenerated)")
	cmd.Flags().StringVar(&trace, "trace", "", "only the calls of this trace id")
	return cmd
}

// watchLoop prints the forge's artifact changes and every process's calls until ctx ends.
// watchLoop prints what fl matches until ctx is done; ready (when not nil) is called once the
// tail of the event log is live.
func watchLoop(ctx context.Context, a *app, f *forge.Forge, fl forge.Filter, ready func()) error {
	sub := f.Subscribe(fl) // artifact and role changes (this process makes no calls)
	defer sub.Close()
	var mu sync.Mutex
	print := func(e forge.LiveEvent) {
		mu.Lock()
		defer mu.Unlock()
		if e.Call != nil && forge.IsOperatorAction(e.Call) {
			e.Kind = liveOperator // an edit, bless, lift, ... is shown as what it is, not as a call
		}
		if a.jsonOut {
			b, _ := json.Marshal(e)
			a.stdout.Write(append(b, '\n'))
			return
		}
		fmt.Fprintln(a.stdout, formatLive(&e))
	}
	tailErr := make(chan error, 1)
	go func() {
		tailErr <- forge.TailEventsReady(ctx, f.Store().LocalDir(), ready, func(ev forge.Event) {
			e := forge.LiveEvent{Kind: forge.LiveCall, Time: ev.Time, Call: &ev}
			if fl.Match(&e) {
				print(e)
			}
		})
	}()
	if !a.jsonOut {
		fmt.Fprintf(a.stderr, "forge: watching %s (Ctrl-C to stop)\n", f.Store().Location())
	}
	for {
		select {
		case <-ctx.Done():
			return <-tailErr
		case err := <-tailErr:
			return err
		case e := <-sub.C:
			print(e)
		}
	}
}

// liveOperator is the kind `forge watch --json` gives an operator action's line.
const liveOperator = "operator"

// callStatusText is "ok", or "FAILED class/rule" (an aggregate of caller errors too); a line
// with no failure class is no failure.
func callStatusText(c *forge.Event) string {
	if c.OK || c.FailureClass == "" {
		return "ok"
	}
	return "FAILED " + c.FailureClass + "/" + c.FailureRule
}

// formatLive is one line of `forge watch`.
func formatLive(e *forge.LiveEvent) string {
	ts := e.Time.Local().Format("15:04:05.000")
	switch {
	case e.Call != nil && e.Call.Kind == forge.EventAggregate:
		c := e.Call
		return fmt.Sprintf("%s calls %s.%s %s %s gen %d x%d since %s p50 %v p99 %v max %v (slowest trace %s)", ts, c.Role, c.Method,
			callStatusText(c), c.ProgramSource, c.ArtifactGen, c.Count, c.FirstTime.Local().Format("15:04:05.000"), time.Duration(c.DurationP50NS).Round(time.Microsecond),
			time.Duration(c.DurationP99NS).Round(time.Microsecond), time.Duration(c.DurationMaxNS).Round(time.Microsecond), idText(c.TraceID))
	case e.Call != nil && e.Call.Kind == forge.EventDropped:
		return fmt.Sprintf("%s events DROPPED %v lost %v (lines the log could not keep)", ts, e.Call.Dropped, e.Call.Lost)
	case e.Call != nil && forge.IsOperatorAction(e.Call):
		return formatOperatorAction(ts, e.Call)
	case e.Call != nil:
		c := e.Call
		status := callStatusText(c)
		src := c.ProgramSource
		if src == "" {
			src = "-"
		}
		return fmt.Sprintf("%s call  %s.%s %s %s gen %d %v provider_calls %d trace %s", ts, c.Role, c.Method, status, src,
			c.ArtifactGen, time.Duration(c.DurationNS).Round(time.Microsecond), c.ProviderCalls, idText(c.TraceID))
	case e.Artifact != nil:
		ar := e.Artifact
		switch {
		case ar.Removed:
			return fmt.Sprintf("%s artifact %s.%s removed", ts, ar.Role, ar.Method)
		case ar.Error != "":
			return fmt.Sprintf("%s artifact %s.%s unreadable: %s", ts, ar.Role, ar.Method, ar.Error)
		case ar.PreviousLifecycle == "":
			return fmt.Sprintf("%s artifact %s.%s new: %s gen %d (%s)", ts, ar.Role, ar.Method, ar.Lifecycle, ar.Generation, ar.Trigger)
		}
		return fmt.Sprintf("%s artifact %s.%s %s gen %d -> %s gen %d (%s)", ts, ar.Role, ar.Method,
			ar.PreviousLifecycle, ar.PreviousGeneration, ar.Lifecycle, ar.Generation, ar.Trigger)
	case e.Role != "":
		return fmt.Sprintf("%s role  %s changed", ts, e.Role)
	}
	return fmt.Sprintf("%s store reloaded", ts)
}

func idText(id forge.ID) string {
	b, _ := id.MarshalText()
	return string(b)
}

// formatOperatorAction is `forge watch`'s line for an operator action (an edit, bless, lift, ...):
// not a call, so it says who did what, and the generation and lifecycle before and after.
func formatOperatorAction(ts string, c *forge.Event) string {
	status := "done"
	if !c.OK {
		status = "REFUSED"
	}
	what := c.Role + "." + c.Method
	if what == "." {
		what = "-"
	}
	line := fmt.Sprintf("%s op    %s %s %s by %s", ts, c.Action, what, status, orDash(c.Who))
	if c.ArtifactGenBefore != 0 || c.ArtifactGen != 0 {
		line += fmt.Sprintf(" gen %d -> %d", c.ArtifactGenBefore, c.ArtifactGen)
	}
	if c.LifecycleBefore != "" || c.Lifecycle != "" {
		line += fmt.Sprintf(" (%s -> %s)", orDash(c.LifecycleBefore), orDash(c.Lifecycle))
	}
	if c.ProviderCalls > 0 {
		line += fmt.Sprintf(" provider_calls %d", c.ProviderCalls)
	}
	if c.Detail != "" {
		line += ": " + oneLine(c.Detail, 200)
	}
	return line
}
