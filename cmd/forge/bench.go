package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"

	"github.com/spf13/cobra"

	"github.com/artifactforge/forge/bench"
	"github.com/artifactforge/forge/registry"
	"github.com/artifactforge/forge/sandbox/yaegi"
)

func init() { register(newBenchCmd) }

func newBenchCmd(a *app) *cobra.Command {
	var cfg bench.Config
	var maxRSSMiB int64
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Size a deployment without a model: build a throwaway store of N methods, call them, print the costs",
		Long: `bench writes N small methods over R roles straight into a throwaway store (no model), opens a
forge on it with the chosen backend and measures: the store's write cost, the first call of each
method (compile), a same-run baseline (the same methods, each alone), the warm phase in the chosen pattern, RSS,
Go heap and goroutines after it, event log bytes per call, and a metrics flush of 1,000 (and N)
touched artifacts. --process also times ` + "`forge call`" + ` as a whole process against ` + "`forge --version`" + `.
--store is a new or empty directory to build in (default: a temporary one, removed unless --keep);
$FORGE_STORE is never used.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Store = a.storeFlag // only --store: never the operator's $FORGE_STORE
			if registry.IsURL(cfg.Store) {
				return usagef("bench: --store names a store URL; bench builds a throwaway directory store: name a new or empty directory, or leave --store out")
			}
			cfg.MaxRSS = maxRSSMiB << 20
			if cfg.ProcessRuns > 0 {
				exe, err := os.Executable()
				if err != nil {
					return fmt.Errorf("bench --process: find the forge executable: %w", err)
				}
				cfg.Executable = exe
			}
			p := a.benchProgress()
			cfg.Progress = p.update
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			rep, err := bench.Run(ctx, cfg)
			p.done()
			if err != nil {
				if errors.Is(err, context.Canceled) {
					return err
				}
				if isBenchUsage(err) {
					return usageError{err}
				}
				return err
			}
			if a.jsonOut {
				if err := a.printJSON(rep); err != nil {
					return err
				}
			} else if err := rep.WriteTable(a.stdout); err != nil {
				return err
			}
			if rep.Aborted != "" {
				return codedError{exitFailed, fmt.Errorf("bench stopped early: %s", rep.Aborted)}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&cfg.Methods, "methods", 100, "methods to build and call")
	fl.IntVar(&cfg.Roles, "roles", 0, "roles the methods are spread over (default: one per 10 methods)")
	fl.StringVar(&cfg.Backend, "backend", yaegi.Name, "where the methods run: "+bench.BackendChoices()+
		" (NAME-MODE: in that isolation mode; default: what a contract naming no sandbox gets)")
	fl.IntVar(&cfg.Concurrency, "concurrency", 1, "goroutines calling at once")
	fl.StringVar(&cfg.Pattern, "pattern", bench.PatternRoundRobin, "warm call pattern: one, round-robin or zipf")
	fl.IntVar(&cfg.Calls, "calls", 0, "warm calls (default: max(10000, 10 x methods))")
	fl.DurationVar(&cfg.Duration, "duration", 0, "call for this long instead of --calls")
	fl.IntVar(&cfg.BaselineCalls, "baseline-calls", 0, "calls before the warm phase: the same-run baseline, the warm pattern's methods each called 20 times in a row (default min(calls, 20000); -1: none)")
	fl.IntVar(&cfg.GenericPct, "generic", 0, "percent of methods that import slices (generic standard library code)")
	fl.IntVar(&cfg.Generations, "generations", 1, "generations per artifact (1-3): later ones are repairs, as a repaired artifact's history")
	fl.DurationVar(&cfg.FlushInterval, "flush-interval", 0, "the forge's metrics flush interval during the run (default 1s, as in production)")
	fl.IntVar(&cfg.MaxLivePrograms, "max-live", 0, "the live-set budget: compiled programs kept ready (default forge.DefaultMaxLivePrograms; -1: no bound)")
	fl.BoolVar(&cfg.Keep, "keep", false, "keep the temporary store (its path is in the report)")
	fl.IntVar(&cfg.ProcessRuns, "process", 0, "also time `forge call` as a whole process this many times against `forge --version`")
	fl.IntVar(&cfg.Regens, "regens", 0, "after the warm phase, replace the first method's code this many times (as regenerations do, no model) and report the memory before and after")
	fl.BoolVar(&cfg.ProcessOnly, "process-only", false, "with --process: skip the in-process phases (for stores too large to compile in one process)")
	fl.Int64Var(&maxRSSMiB, "max-rss", 0, "stop when this process's RSS passes this many MiB (0: no limit)")
	return cmd
}

// isBenchUsage tells a configuration error (a flag out of range) from a failure of the run.
func isBenchUsage(err error) bool {
	var ce bench.ConfigError
	return errors.As(err, &ce)
}

// benchBar shows bench's phases as counted steps of the CLI's one progress reporter
// (slowSteps.count): a bar per phase on a terminal, a line per phase with -v otherwise, nothing
// under --json.
type benchBar struct {
	steps *slowSteps
	mu    sync.Mutex
	phase string
	cur   *countedStep
}

func (a *app) benchProgress() *benchBar {
	steps := a.steps()
	if steps == nil {
		return nil
	}
	return &benchBar{steps: steps}
}

func (p *benchBar) update(phase string, done, total int64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if phase != p.phase {
		p.cur.finish()
		p.phase, p.cur = phase, p.steps.count("bench: "+phase, total)
	}
	p.cur.set(done)
}

func (p *benchBar) done() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cur.finish()
	p.phase, p.cur = "", nil
}
