package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/artifactforge/forge/classifier"
	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/registry"
	"github.com/artifactforge/forge/sandbox"
)

func init() {
	register(newCallCmd)
	register(newRegenCmd)
	register(newBlessCmd)
	register(newRollbackCmd)
	register(newStaleCmd)
	register(newPruneCmd)
}

// openForge opens the forge on the store with the configured provider. No provider configured is
// not an error here: persisted artifacts still run, and generation says how to configure one.
// closeForge closes f and warns on stderr about what it could not finish (call counters it could
// not write, a sandbox that did not close cleanly): the command's own result stands.
func (a *app) closeForge(f *forge.Forge) {
	if err := f.Close(); err != nil {
		fmt.Fprintf(a.stderr, "forge: warning: %v\n", err)
	}
}

// operatorCtx names the CLI's user as the client of the operator actions made with ctx: their
// event lines say who ("cli:USER").
func operatorCtx(ctx context.Context) context.Context {
	return forge.WithClient(ctx, forge.CLIClient())
}

func (a *app) openForge(mod ...func(*forge.Options)) (*forge.Forge, error) {
	dir, err := a.storeDir()
	if err != nil {
		return nil, err
	}
	p, err := forge.ProviderFromEnv(a.providerFlag, os.Getenv)
	if err != nil {
		return nil, err
	}
	getenv := os.Getenv
	if a.eventsFlag != "" { // --events wins over $FORGE_EVENTS
		getenv = func(k string) string {
			if k == "FORGE_EVENTS" {
				return a.eventsFlag
			}
			return os.Getenv(k)
		}
	}
	opts, err := optionsFromEnv(getenv)
	if err != nil {
		return nil, err
	}
	opts.Store, opts.Provider, opts.ClientName = dir, p, a.clientName()
	// Damaged files the calls find are quarantined (and recorded for doctor); say so here too.
	opts.OnQuarantine = a.reportQuarantine
	if p != nil && a.verbose && !a.jsonOut {
		opts.Provider = verboseProvider{p, a.stderr}
	}
	for _, m := range mod {
		m(&opts)
	}
	var f *forge.Forge
	if steps := a.steps(); steps != nil {
		// The built-in backends, wrapped so that slow compiles and acceptance tests show. They
		// are built on first use, after Open: their caches go to the store's local directory.
		opts.Sandboxes = func(name string) (sandbox.Sandbox, error) {
			sb, err := forge.DefaultSandbox(name, f.Store().LocalDir())
			if err != nil {
				return nil, err
			}
			return withProgress(sb, name, steps), nil
		}
	}
	f, err = forge.Open(opts)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// optionsFromEnv reads the operator's switches (forge.OptionsFromEnv).
func optionsFromEnv(getenv func(string) string) (forge.Options, error) {
	return forge.OptionsFromEnv(getenv)
}

// callArgs builds the JSON args object from --args and name=value pairs; a value that is valid
// JSON is taken as JSON (n=3, ok=true, xs=[1,2]), anything else as a string (s=hello). --args is
// JSON text, @FILE for a file's content, or - for stdin. A name given twice, and bytes that are
// not UTF-8, are refused: JSON decoding would silently keep one value or replace the bytes.
func callArgs(argsFlag string, pairs []string, stdin io.Reader) (json.RawMessage, error) {
	raw, from := []byte(argsFlag), "--args"
	switch {
	case argsFlag == "-":
		b, err := io.ReadAll(stdin)
		if err != nil {
			return nil, fmt.Errorf("--args -: read stdin: %w", err)
		}
		raw, from = bytes.TrimSpace(b), "--args - (stdin)"
		if len(raw) == 0 {
			return nil, usagef("--args -: stdin is empty; pipe a JSON object or array into forge")
		}
	case strings.HasPrefix(argsFlag, "@"):
		b, err := os.ReadFile(argsFlag[1:])
		if err != nil {
			return nil, usagef("--args %s: %v; name a readable JSON file after @", argsFlag, err)
		}
		raw, from = bytes.TrimSpace(b), "--args "+argsFlag
		if len(raw) == 0 {
			return nil, usagef("%s: the file is empty; it must hold a JSON object or array", from)
		}
	}
	if err := registry.CheckUTF8(from, raw); err != nil {
		return nil, usageError{err}
	}
	if len(raw) > 0 && !json.Valid(raw) {
		return nil, usagef("%s is not valid JSON (%s): %s; give a JSON object such as '{\"s\":\"hi\"}' or array, or name=value pairs", from, registry.JSONSyntaxWhere(raw), oneLine(string(raw), 200))
	}
	if len(pairs) == 0 {
		if len(raw) == 0 {
			return nil, nil
		}
		return json.RawMessage(raw), nil
	}
	obj := map[string]json.RawMessage{}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &obj); err != nil {
			return nil, usagef("%s must be a JSON object to combine with name=value pairs: %v", from, err)
		}
	}
	given := map[string]string{}
	for _, p := range pairs {
		if err := registry.CheckUTF8(fmt.Sprintf("argument %q", p), []byte(p)); err != nil {
			return nil, usageError{err}
		}
		name, value, ok := strings.Cut(p, "=")
		if !ok || name == "" {
			return nil, usagef("argument %q is not name=value", p)
		}
		if prev, dup := given[name]; dup {
			return nil, usagef("argument %s is given twice (%q and %q); give each name once", name, prev, p)
		}
		if _, dup := obj[name]; dup {
			return nil, usagef("argument %s is given both in %s and as %q; give it once", name, from, p)
		}
		given[name] = p
		if json.Valid([]byte(value)) {
			obj[name] = json.RawMessage(value)
		} else {
			b, _ := json.Marshal(value)
			obj[name] = b
		}
	}
	b, err := json.Marshal(obj)
	return b, err
}

func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt)
}

// knownRolesHint names the store's roles closest to a role name that is not there (a typo is
// the likely cause): "; did you mean text?" or "; roles in this store: a, b", empty if none.
func knownRolesHint(s registry.Backend, name string) string {
	recs, err := s.Roles()
	if err != nil || len(recs) == 0 {
		return ""
	}
	var close, all []string
	for _, r := range recs {
		all = append(all, r.Role)
		if editDistance(r.Role, name) <= 2 {
			close = append(close, r.Role)
		}
	}
	if len(close) > 0 {
		return "; did you mean " + strings.Join(close, " or ") + "?"
	}
	if len(all) > 10 {
		all = append(all[:10], fmt.Sprintf("... (%d in all: forge role ls)", len(recs)))
	}
	return "; roles in this store: " + strings.Join(all, ", ")
}

// editDistance is the Levenshtein distance of two short names.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// interrupted is the error of a call or regen that failed because Ctrl-C (SIGINT) ended its
// context, nil otherwise. The forge's own message speaks for a long-lived process ("the
// generation goes on for the other callers"); here the process ends with the command, and with
// it any generation it was running: nothing of it was stored.
func interrupted(ctx context.Context, role, method, verb string) error {
	if ctx.Err() == nil {
		return nil
	}
	return codedError{exitInterrupted, fmt.Errorf("interrupted (SIGINT): %s %s.%s stopped; a generation this process was running was abandoned and nothing of it was stored (one another process runs goes on); run the command again", verb, role, method)}
}

func newCallCmd(a *app) *cobra.Command {
	var argsFlag string
	cmd := &cobra.Command{
		Use:   "call ROLE METHOD [name=value ...]",
		Short: "Call role.method: run its persisted artifact, or generate, verify and persist it first",
		Args:  nameArgs(2, math.MaxInt, "role", "method"),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := callArgs(argsFlag, args[2:], cmd.InOrStdin())
			if err != nil {
				return err
			}
			f, err := a.openForge()
			if err != nil {
				return err
			}
			defer a.closeForge(f)
			ctx, cancel := signalContext()
			defer cancel()
			pctx, endSteps := a.generationProgress(ctx)
			o := f.Call(pctx, args[0], args[1], in)
			endSteps()
			if a.jsonOut {
				if err := a.printJSON(o); err != nil {
					return err
				}
			} else if o.OK {
				fmt.Fprintln(a.stdout, string(o.Value))
			}
			if !o.OK {
				if err := interrupted(ctx, args[0], args[1], "call"); err != nil {
					return err
				}
				if o.Err.Type == forge.TypeRefused {
					return codedError{exitFailed, errors.New(o.Err.Message)}
				}
				if o.Err.Class == string(classifier.Caller) {
					msg := o.Err.Message
					switch o.Err.Type {
					case forge.TypeUnknownRole:
						msg += knownRolesHint(f.Store(), args[0])
					case forge.TypeArgs:
						msg += fmt.Sprintf("; on the command line: name=value per parameter, or all of them with --args JSON (the signature: `forge show %s %s`)", args[0], args[1])
					}
					return codedError{exitFailed, fmt.Errorf("%s (%s/%s)", msg, o.Err.Class, o.Err.Type)}
				}
				return codedError{exitFailed, fmt.Errorf("%s failure (rule %s, %s): %s", o.Err.Class, o.Err.Rule, o.Err.Type, o.Err.Message)}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&argsFlag, "args", "", `JSON args: an object by parameter name ({"s":"go"}) or an array by position; @FILE reads them from a file, - from stdin`)
	return cmd
}

func newRegenCmd(a *app) *cobra.Command {
	var nextCall bool
	var ro forge.RegenOptions
	cmd := &cobra.Command{
		Use:   "regen ROLE METHOD",
		Short: "Regenerate an artifact's code now with the provider (or, with --next-call, on its next call)",
		Args:  nameArgs(2, 2, "role", "method"),
		RunE: func(_ *cobra.Command, args []string) error {
			f, err := a.openForge()
			if err != nil {
				return err
			}
			defer a.closeForge(f)
			if nextCall {
				if err := f.MarkRegenerateContext(operatorCtx(context.Background()), args[0], args[1]); err != nil {
					return err
				}
				if a.jsonOut {
					return a.printJSON(map[string]any{"ok": true, "role": args[0], "method": args[1], "regenerate_on_next_call": true})
				}
				fmt.Fprintf(a.stdout, "%s.%s will be regenerated on its next call\n", args[0], args[1])
				return nil
			}
			ctx, cancel := signalContext()
			defer cancel()
			pctx, endSteps := a.generationProgress(operatorCtx(ctx))
			o := f.RegenerateWith(pctx, args[0], args[1], ro)
			endSteps()
			if a.jsonOut {
				if err := a.printJSON(o); err != nil {
					return err
				}
			}
			if !o.OK && o.Err.Type == forge.TypeRefused {
				// Still quarantined (the model wrote the quarantined code again): the message
				// says the ways out.
				return codedError{exitFailed, errors.New(o.Err.Message)}
			}
			if !o.OK {
				if err := interrupted(ctx, args[0], args[1], "regen"); err != nil {
					return err
				}
				return codedError{exitFailed, fmt.Errorf("regenerate %s.%s: %s failure (rule %s): %s", args[0], args[1], o.Err.Class, o.Err.Rule, o.Err.Message)}
			}
			switch {
			case a.jsonOut:
			case o.Meta.Joined:
				fmt.Fprintf(a.stdout, "%s.%s: joined a regeneration already under way: generation %d\n", args[0], args[1], o.Meta.ArtifactGen)
			case o.Meta.Unchanged:
				fmt.Fprintf(a.stdout, "%s.%s: the new answer is the current code byte for byte: generation %d kept, nothing added to the history (%d provider call(s))\n", args[0], args[1], o.Meta.ArtifactGen, o.Meta.ProviderCalls)
			default:
				fmt.Fprintf(a.stdout, "%s.%s regenerated: generation %d (%d provider call(s), %s)\n", args[0], args[1], o.Meta.ArtifactGen, o.Meta.ProviderCalls, o.Meta.Duration.Round(time.Millisecond))
				printReplay(a, o.Meta.Replay)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&nextCall, "next-call", false, "only mark it: the next call regenerates")
	cmd.Flags().BoolVar(&ro.AcceptChanges, "accept-changes", false, "promote the new code even if it changes answers of the sample of real calls (shown when refused)")
	return cmd
}

func newBlessCmd(a *app) *cobra.Command {
	var reset bool
	cmd := &cobra.Command{
		Use:   "bless ROLE METHOD",
		Short: "Pin an artifact: always executed, never replaced automatically",
		Args:  nameArgs(2, 2, "role", "method"),
		RunE: func(_ *cobra.Command, args []string) error {
			return a.operator(args, func(ctx context.Context, f *forge.Forge) error { return f.BlessContext(ctx, args[0], args[1], reset) }, "blessed")
		},
	}
	cmd.Flags().BoolVar(&reset, "reset-metrics", false, "start its success and failure counters afresh")
	return cmd
}

func newRollbackCmd(a *app) *cobra.Command {
	var opts forge.PromoteOptions
	cmd := &cobra.Command{
		Use:   "rollback ROLE METHOD [GEN]",
		Short: "Make an earlier kept generation current again (default: the one before the current)",
		Args:  nameArgs(2, 3, "role", "method"),
		RunE: func(_ *cobra.Command, args []string) error {
			gen := 0
			if len(args) == 3 {
				n, err := strconv.Atoi(strings.TrimPrefix(args[2], "gen-"))
				if err != nil || n <= 0 {
					return usagef("rollback: GEN %q is not a generation number (e.g. 2 or gen-2; see `forge history %s %s`)", args[2], args[0], args[1])
				}
				gen = n
			}
			var art *registry.Artifact
			err := a.operator(args, func(ctx context.Context, f *forge.Forge) error {
				var err error
				art, err = f.RollbackWith(ctx, args[0], args[1], gen, opts)
				return err
			}, "")
			if err == nil && !a.jsonOut {
				fmt.Fprintf(a.stdout, "%s.%s rolled back: generation %d is %s\n", args[0], args[1], art.Generation, art.History[0].Trigger)
				printHistoryReplays(a, art.History[:1])
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&opts.AcceptChanges, "accept-changes", false, "roll back even if the kept code changes answers of the sample of real calls (shown when refused)")
	return cmd
}

// operator runs an operator verb on an existing artifact and prints what it did. The context
// names the CLI's user (operatorCtx), for the action's event line.
func (a *app) operator(args []string, fn func(context.Context, *forge.Forge) error, done string) error {
	f, err := a.openForge()
	if err != nil {
		return err
	}
	defer a.closeForge(f)
	if err := fn(operatorCtx(context.Background()), f); err != nil {
		return err
	}
	if done != "" && !a.jsonOut {
		fmt.Fprintf(a.stdout, "%s.%s %s\n", args[0], args[1], done)
	}
	if a.jsonOut {
		art, err := f.Store().Load(args[0], args[1])
		if err != nil {
			return err
		}
		return a.printJSON(actionDoc{OK: true, Artifact: art}) // an action's document: "ok" and the artifact's fields
	}
	return nil
}

// actionDoc is the --json document of an operator verb on an artifact (bless, quarantine,
// rollback): "ok": true with the artifact as it is now, its fields at the top level as before.
type actionDoc struct {
	OK bool `json:"ok"`
	*registry.Artifact
}

func newStaleCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "stale",
		Short: "List artifacts verified against an older contract, an unknown role, or another runtime",
		Args:  exactArgs(0),
		RunE: func(*cobra.Command, []string) error {
			s, err := a.openStoreRO()
			if err != nil {
				return err
			}
			defer s.Close()
			rows, err := forge.Stale(s)
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(rows)
			}
			if len(rows) == 0 {
				fmt.Fprintln(a.stdout, "no stale artifacts")
				return nil
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ROLE\tMETHOD\tWHY")
			for _, r := range rows {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Role, r.Method, r.Why)
			}
			return tw.Flush()
		},
	}
}

// parseAge parses --older-than (forge.ParseAge).
func parseAge(s string) (time.Duration, error) {
	d, err := forge.ParseAge(s)
	if err != nil {
		return 0, usagef("--older-than %v (0s: everything not used as of now)", err)
	}
	return d, nil
}

// humanBytes prints a byte count in binary units (12.3 MiB).
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

func newPruneCmd(a *app) *cobra.Command {
	var olderThan string
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "prune [--older-than 30d] [--dry-run=false]",
		Short: "Archive artifacts unused for a while and drop unused wasm cache files (a dry run unless --dry-run=false)",
		Long: `Prune archives artifacts not used for --older-than (reversible: a later call or
` + "`forge rollback`" + ` revives them; blessed artifacts are never archived) and removes the wasm
sandbox's built modules and compiled code under the store's cache/ that were not used for as long
(a removed module is built again on its next use). It is a dry run unless --dry-run=false.`,
		Args: exactArgs(0),
		RunE: func(*cobra.Command, []string) error {
			age, err := parseAge(olderThan)
			if err != nil {
				return err
			}
			f, err := a.openForge()
			if err != nil {
				return err
			}
			defer a.closeForge(f)
			rep, err := f.Prune(operatorCtx(context.Background()), time.Now().Add(-age), dryRun)
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(struct {
					OK bool `json:"ok"`
					forge.PruneReport
				}{true, rep})
			}
			pruned, cache := rep.Archived, rep.Cache
			verb := "archived"
			if dryRun {
				verb = "would archive"
			}
			for _, k := range pruned {
				fmt.Fprintf(a.stdout, "%s %s\n", verb, k)
			}
			fmt.Fprintf(a.stdout, "%s %d artifact(s) unused for %s", verb, len(pruned), olderThan)
			if dryRun && len(pruned) > 0 {
				fmt.Fprint(a.stdout, "; run with --dry-run=false to archive them (a later call or `forge rollback` revives them)")
			}
			fmt.Fprintln(a.stdout)
			cverb := "removed"
			if dryRun {
				cverb = "would remove"
			}
			fmt.Fprintf(a.stdout, "%s %d wasm cache file(s) (%s); kept %d (%s)\n", cverb, len(cache.Removed),
				humanBytes(cache.RemovedBytes), cache.Kept, humanBytes(cache.KeptBytes))
			return nil
		},
	}
	cmd.Flags().StringVar(&olderThan, "older-than", "30d", "archive artifacts not used for this long")
	cmd.Flags().BoolVar(&dryRun, "dry-run", true, "only list what would be archived")
	return cmd
}
