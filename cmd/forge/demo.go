package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/provider"
	"github.com/artifactforge/forge/provider/replay"
	"github.com/artifactforge/forge/registry"
	"github.com/artifactforge/forge/sandbox"
)

// demoCassette holds the answers the demo's "model" gives, so the demo runs offline and the same
// way every time.
//
//go:embed demo/cassette.jsonl
var demoCassette []byte

// demoLegend says what the narration's terms mean, for a reader who never read the code
// (TestDemoLegendNamesEveryTerm holds it to the terms the demo's trace uses).
const demoLegend = `
How to read it: each call prints ROLE.METHOD ARGS -> ANSWER, then where the answer came from:
  generated (the model wrote the code; forge verified and stored it), persisted (the stored code
  ran, no model call), repaired (the model fixed stored code that failed) or regenerated (the
  model wrote it anew). gen-N is the N-th version of a method's code, with why it was made:
  initial_forge, repair:intrinsic, regenerate:budget_exhausted, operator:regen, operator:rollback.
  decision ACTION:REASON is what forge chose and why: generate:missing (no code yet),
  execute:healthy (stored code in good health), execute:blessed (pinned by an operator),
  refuse:quarantined (stopped by an operator); bless, quarantine, rollback: an operator's actions.
  A failure is CLASS/RULE: intrinsic (the code's own: a panic, a wrong answer; repaired),
  extrinsic (the world's: an upstream 503; the code's health is untouched), adaptive (the world
  changed under the code: repaired, counted apart), caller (the args'). Lifecycle: candidate (new),
  durable (proven by calls), blessed (pinned). Counters: the calls that succeeded, and that failed
  by class.
`

// demoWarmCalls is how many warm calls step 2 times for its median.
const demoWarmCalls = 1000

func init() { register(newDemoCmd) }

func newDemoCmd(a *app) *cobra.Command {
	var backend string
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Show the whole lifecycle on a fresh store: generate, reuse, extrinsic failure, repair, regeneration, bless, quarantine, rollback, learning",
		Long: `demo runs the forge call path end to end with real sandbox runs and a cassette of model answers
embedded in the binary (no model, no network): the first call generates and persists, the second
runs the persisted code with no provider call, an upstream 503 leaves health untouched, a panic is
repaired, the repair budget runs out and forces regeneration, and an operator blesses, quarantines
and rolls back; a role hits a sandbox pitfall, is fixed, and the lesson lets another role pass at
its first attempt. Each step prints what happened and how long it took.

The store is a temporary directory removed at the end, unless --store names a new or empty one
to keep. Exit 0 when every step behaved as expected, 1 otherwise (with what differed), so the demo
doubles as a smoke test. --json prints the call events (JSON Lines) on stdout and the narration on
stderr.

The demo's role names no sandbox, so it runs where any such contract would: the safe default
(wasm when a Go toolchain is here, else yaegi in worker processes), or --sandbox.`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error { return a.demo(cmd.Context(), backend) },
	}
	cmd.Flags().StringVar(&backend, "sandbox", "", "run the demo's role on this backend ("+sandbox.BackendNames()+"); default: the safe default, or $FORGE_SANDBOX")
	return cmd
}

// demoStore returns the store directory for the demo and a cleanup: --store if it is new or empty
// (kept), else a temporary directory (removed).
func (a *app) demoStore() (string, func(), error) {
	if a.storeFlag == "" {
		dir, err := os.MkdirTemp("", "forge-demo-")
		if err != nil {
			return "", nil, fmt.Errorf("demo: temporary store: %w", err)
		}
		return dir, func() { os.RemoveAll(dir) }, nil
	}
	if registry.IsURL(a.storeFlag) {
		return "", nil, usagef("demo: --store names a store URL; the demo builds a fresh directory store: name a new directory, or leave --store out for a temporary one")
	}
	entries, err := os.ReadDir(a.storeFlag)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", nil, fmt.Errorf("demo: --store %s: %w", a.storeFlag, err)
	}
	if len(entries) > 0 {
		return "", nil, usagef("demo: --store %s is not empty; the demo needs a fresh store: name a new directory, or leave --store out for a temporary one", a.storeFlag)
	}
	return a.storeFlag, func() {}, nil
}

func (a *app) demo(ctx context.Context, backend string) error {
	if backend == "" {
		backend = strings.TrimSpace(os.Getenv("FORGE_SANDBOX"))
	}
	dir, cleanup, err := a.demoStore()
	if err != nil {
		return err
	}
	defer cleanup()
	narration := a.stdout
	if a.jsonOut {
		narration = a.stderr
	}
	d, err := newDemo(dir, narration, backend)
	if err != nil {
		return err
	}
	kept := "temporary, removed at the end"
	if a.storeFlag != "" {
		kept = "kept"
	}
	d.printf("forge demo: store %s (%s); provider replay:demo (%d answers embedded in the binary); sandbox %s\n", dir, kept, d.answers, d.placement)
	d.printf("%s", demoLegend)
	start := time.Now()
	d.warmUp(ctx, a.steps())
	steps := []struct {
		title string
		run   func(context.Context)
	}{
		{"first call generates, verifies and persists", d.stepGenerate},
		{"second call runs the persisted artifact with no provider call", d.stepWarm},
		{"an extrinsic failure (upstream 503) leaves health untouched", d.stepExtrinsic},
		{"an intrinsic failure (panic) is repaired", d.stepRepair},
		{"the repair budget runs out and forces regeneration", d.stepBudget},
		{"bless, quarantine and rollback", d.stepOperator},
		{"a lesson is learned by one role and reused by another", d.stepLearn}, // demo_learn.go
	}
	for i, s := range steps {
		d.step = i + 1
		d.printf("\n%d. %s\n", i+1, s.title)
		s.run(ctx)
	}
	if err := d.f.Close(); err != nil {
		d.differ("closing the forge: %v", err)
	}
	if a.jsonOut {
		enc := json.NewEncoder(a.stdout)
		for _, e := range d.events {
			if err := enc.Encode(e); err != nil {
				return err
			}
		}
	}
	d.printf("\n")
	if len(d.diffs) > 0 {
		return codedError{exitFailed, fmt.Errorf("demo: %d expectation(s) not met:\n  %s", len(d.diffs), strings.Join(d.diffs, "\n  "))}
	}
	calls, ops := 0, 0
	for i := range d.events {
		if forge.IsOperatorAction(&d.events[i]) {
			ops++ // regen, bless, quarantine, rollback: in the log, but not calls
		} else {
			calls++
		}
	}
	d.printf("ok: every step behaved as expected (%d calls, %d operator actions, %d provider calls, %s)\n", calls, ops, d.prov.n.Load(), fmtDur(time.Since(start)))
	return nil
}

// demoRun is the state of one demo run.
type demoRun struct {
	f         *forge.Forge
	placement string // where the role runs, for the narration
	prov      *countingProvider
	out       io.Writer
	answers   int
	step      int
	diffs     []string

	mu     sync.Mutex
	events []forge.Event
}

// countingProvider counts the requests that reach the cassette: the demo's proof that warm calls
// make none.
type countingProvider struct {
	provider.Provider
	n atomic.Int64
}

func (p *countingProvider) Generate(ctx context.Context, r provider.Request) (provider.Answer, error) {
	p.n.Add(1)
	return p.Provider.Generate(ctx, r)
}

func newDemo(dir string, out io.Writer, backend string) (*demoRun, error) {
	c, err := replay.New("demo", demoCassette)
	if err != nil {
		return nil, fmt.Errorf("demo: embedded cassette: %w", err)
	}
	d := &demoRun{prov: &countingProvider{Provider: demoLessonModel{c}}, out: out}
	for _, l := range strings.Split(string(demoCassette), "\n") {
		if strings.HasPrefix(l, "{") {
			d.answers++
		}
	}
	// Metrics are flushed explicitly between steps (never by the clock) so that the counters the
	// demo shows, and the events it records, are the same on every run.
	d.f, err = forge.Open(forge.Options{Store: dir, Provider: d.prov, FlushInterval: time.Hour, DefaultSandbox: backend,
		EventSink: func(e forge.Event) { d.mu.Lock(); d.events = append(d.events, e); d.mu.Unlock() }})
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	text := registry.Contract{Role: "text", Purpose: "string utilities",
		Methods: map[string]string{
			"upper":      "func Upper(s string) string",
			"lower":      "func Lower(s string) string",
			"capitalize": "func Capitalize(s string) string",
		},
		Deliverable: json.RawMessage(`{"type":"string"}`),
		Acceptance: &registry.Acceptance{Examples: []registry.Example{
			{Method: "upper", Args: json.RawMessage(`{"s":"go"}`), Expect: json.RawMessage(`"GO"`)},
			{Method: "lower", Args: json.RawMessage(`{"s":"GO"}`), Expect: json.RawMessage(`"go"`)},
			{Method: "capitalize", Args: json.RawMessage(`{"s":"go"}`), Expect: json.RawMessage(`"Go"`)},
		}}}
	d.placement = d.f.DefaultPlacement().String()
	if err := d.f.AddRole(text); err != nil {
		d.f.Close()
		return nil, fmt.Errorf("demo: %w", err)
	}
	return d, nil
}

func (d *demoRun) printf(format string, args ...any) { fmt.Fprintf(d.out, format, args...) }

// differ records an unmet expectation of the current step and shows it in place.
func (d *demoRun) differ(format string, args ...any) {
	msg := fmt.Sprintf("step %d: ", d.step) + fmt.Sprintf(format, args...)
	d.diffs = append(d.diffs, msg)
	d.printf("   !! %s\n", msg)
}

// want is one expectation of a call's Outcome; empty fields are not checked.
type want struct {
	ok        bool
	value     string // JSON
	source    string
	gen       int
	calls     int // provider calls; -1: not checked
	decision  string
	class     string
	errType   string
	repaired  bool
	msgSubstr string
}

// call runs role.method, prints one line about it and checks it against w.
func (d *demoRun) call(ctx context.Context, role, method, args string, w want) forge.Outcome {
	start := time.Now()
	o := d.f.Call(ctx, role, method, json.RawMessage(args))
	took := time.Since(start)
	d.printf("   %s.%s %s -> %s\n      %s\n", role, method, args, describeResult(o), describeMeta(o, took))
	d.check(fmt.Sprintf("%s.%s %s", role, method, args), o, w)
	return o
}

func describeResult(o forge.Outcome) string {
	if o.OK {
		return string(o.Value)
	}
	return fmt.Sprintf("error %s/%s (%s): %s", o.Err.Class, o.Err.Rule, o.Err.Type, oneLine(o.Err.Message, 140))
}

func describeMeta(o forge.Outcome, took time.Duration) string {
	var parts []string
	if o.Meta.ProgramSource != "" {
		parts = append(parts, fmt.Sprintf("%s gen-%d", o.Meta.ProgramSource, o.Meta.ArtifactGen))
	}
	parts = append(parts, "decision "+o.Meta.Decision, fmt.Sprintf("provider calls %d", o.Meta.ProviderCalls))
	if o.Meta.RepairAttempted {
		parts = append(parts, fmt.Sprintf("repair attempted, succeeded %t", o.Meta.RepairSucceeded))
	}
	if !o.OK {
		parts = append(parts, fmt.Sprintf("retriable %t", o.Err.Retriable))
	}
	return strings.Join(parts, ", ") + ", " + fmtDur(took)
}

func (d *demoRun) check(what string, o forge.Outcome, w want) {
	if o.OK != w.ok {
		detail := ""
		if o.Err != nil {
			detail = ": " + o.Err.Error()
		}
		d.differ("%s: ok = %t, want %t%s", what, o.OK, w.ok, detail)
		return
	}
	if w.value != "" && string(o.Value) != w.value {
		d.differ("%s: value %s, want %s", what, o.Value, w.value)
	}
	if w.source != "" && o.Meta.ProgramSource != w.source {
		d.differ("%s: program source %q, want %q", what, o.Meta.ProgramSource, w.source)
	}
	if w.gen != 0 && o.Meta.ArtifactGen != w.gen {
		d.differ("%s: artifact gen-%d, want gen-%d", what, o.Meta.ArtifactGen, w.gen)
	}
	if w.calls >= 0 && o.Meta.ProviderCalls != w.calls {
		d.differ("%s: %d provider call(s), want %d", what, o.Meta.ProviderCalls, w.calls)
	}
	if w.decision != "" && o.Meta.Decision != w.decision {
		d.differ("%s: decision %q, want %q", what, o.Meta.Decision, w.decision)
	}
	if w.repaired && !(o.Meta.RepairAttempted && o.Meta.RepairSucceeded) {
		d.differ("%s: want a successful repair, got attempted=%t succeeded=%t", what, o.Meta.RepairAttempted, o.Meta.RepairSucceeded)
	}
	if o.Err != nil {
		if w.class != "" && o.Err.Class != w.class {
			d.differ("%s: failure class %q, want %q", what, o.Err.Class, w.class)
		}
		if w.errType != "" && o.Err.Type != w.errType {
			d.differ("%s: failure type %q, want %q", what, o.Err.Type, w.errType)
		}
		if w.msgSubstr != "" && !strings.Contains(o.Err.Message, w.msgSubstr) {
			d.differ("%s: message %q does not say %q", what, o.Err.Message, w.msgSubstr)
		}
	}
}

// artifact flushes buffered metrics and reads role.method's artifact. It uses Store.Peek rather
// than Store.Load so that looking does not replace the store's cached snapshot (which would make
// the next call compile the code again).
func (d *demoRun) artifact(role, method string) *registry.Artifact {
	d.f.Flush()
	return d.onDisk(role, method)
}

// onDisk reads role.method's artifact as it is stored now (its file and the metrics journals).
func (d *demoRun) onDisk(role, method string) *registry.Artifact {
	a, err := d.f.Store().Peek(role, method)
	if err != nil {
		d.differ("read %s.%s: %v", role, method, err)
		return &registry.Artifact{}
	}
	return a
}

func describeArtifact(a *registry.Artifact) string {
	trig := ""
	if len(a.History) > 0 {
		trig = a.History[0].Trigger
	}
	return fmt.Sprintf("gen-%d (%s), lifecycle %s, counters: success %d, intrinsic %d, adaptive %d, extrinsic %d; repairs since regeneration %d",
		a.Generation, trig, a.Lifecycle, a.SuccessCount, a.IntrinsicFailureCount, a.AdaptiveFailureCount, a.ExtrinsicFailureCount, a.RepairCountSinceRegen)
}

func (d *demoRun) stepGenerate(ctx context.Context) {
	d.call(ctx, "text", "upper", `{"s":"hello"}`, want{ok: true, value: `"HELLO"`, source: forge.SourceGenerated, gen: 1, calls: 1, decision: "generate:missing"})
	a := d.onDisk("text", "upper")
	d.printf("   on disk: %s\n", describeArtifact(a))
	if a.Generation != 1 || len(a.History) == 0 || a.History[0].Trigger != "initial_forge" {
		d.differ("text.upper: want gen-1 with trigger initial_forge on disk, got %s", describeArtifact(a))
	}
}

func (d *demoRun) stepWarm(ctx context.Context) {
	d.call(ctx, "text", "upper", `{"s":"forge"}`, want{ok: true, value: `"FORGE"`, source: forge.SourcePersisted, gen: 1, calls: 0, decision: "execute:healthy"})
	before := d.prov.n.Load()
	durs := make([]time.Duration, 0, demoWarmCalls)
	failed, providerCalls := 0, 0
	args := json.RawMessage(`["warm"]`)
	for range demoWarmCalls {
		start := time.Now()
		o := d.f.Call(ctx, "text", "upper", args)
		durs = append(durs, time.Since(start))
		providerCalls += o.Meta.ProviderCalls
		if !o.OK || string(o.Value) != `"WARM"` {
			failed++
		}
	}
	slices.Sort(durs)
	d.printf("   %d warm calls (args by position [\"warm\"]): median %s, p90 %s, p99 %s; provider calls %d, failures %d\n",
		demoWarmCalls, fmtDur(durs[len(durs)/2]), fmtDur(durs[len(durs)*90/100]), fmtDur(durs[len(durs)*99/100]), d.prov.n.Load()-before, failed)
	if failed > 0 || providerCalls > 0 || d.prov.n.Load() != before {
		d.differ("warm calls: %d failed, %d provider call(s); want 0 and 0", failed, d.prov.n.Load()-before)
	}
	a := d.artifact("text", "upper")
	d.printf("   after flushing the buffered metrics: %s\n", describeArtifact(a))
	if want := int64(demoWarmCalls + 2); a.SuccessCount != want {
		d.differ("text.upper: success count %d, want %d", a.SuccessCount, want)
	}
}

func (d *demoRun) stepExtrinsic(ctx context.Context) {
	var status atomic.Int32
	status.Store(http.StatusOK)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		code := int(status.Load())
		w.WriteHeader(code)
		if code == http.StatusOK {
			io.WriteString(w, "hello from upstream")
		} else {
			io.WriteString(w, "upstream is down")
		}
	}))
	defer srv.Close()
	hostPort := strings.TrimPrefix(srv.URL, "http://")
	err := d.f.AddRole(registry.Contract{Role: "web", Purpose: "fetch pages from allowed hosts",
		Methods:      map[string]string{"fetch": "func Fetch(url string) (string, error)"},
		Capabilities: &registry.Capabilities{HTTP: &registry.HTTPCapability{Allow: []string{hostPort}, Timeout: "5s"}}})
	if err != nil {
		d.differ("add role web: %v", err)
		return
	}
	d.printf("   role web: capability http.allow = [%s] (an httptest server on this machine)\n", hostPort)
	args := fmt.Sprintf(`{"url":%q}`, srv.URL+"/page")
	d.call(ctx, "web", "fetch", args, want{ok: true, value: `"hello from upstream"`, source: forge.SourceGenerated, gen: 1, calls: 1})
	before := d.artifact("web", "fetch")
	d.printf("   before: %s\n", describeArtifact(before))

	status.Store(http.StatusServiceUnavailable)
	d.printf("   the upstream now answers 503\n")
	o := d.call(ctx, "web", "fetch", args, want{ok: false, source: forge.SourcePersisted, gen: 1, calls: 0, class: "extrinsic"})
	if o.Err != nil && (!o.Err.Retriable || o.Meta.RepairAttempted) {
		d.differ("web.fetch on 503: want retriable and no repair, got retriable=%t repair_attempted=%t", o.Err.Retriable, o.Meta.RepairAttempted)
	}
	after := d.artifact("web", "fetch")
	d.printf("   after:  %s\n", describeArtifact(after))
	if after.IntrinsicFailureCount != before.IntrinsicFailureCount || after.AdaptiveFailureCount != before.AdaptiveFailureCount ||
		after.RepairCountSinceRegen != before.RepairCountSinceRegen || after.Generation != before.Generation ||
		after.Lifecycle != before.Lifecycle || after.ExtrinsicFailureCount != before.ExtrinsicFailureCount+1 {
		d.differ("web.fetch: health changed by an extrinsic failure:\n    before %s\n    after  %s", describeArtifact(before), describeArtifact(after))
	}

	status.Store(http.StatusOK)
	d.printf("   the upstream recovers; the same code serves again\n")
	d.call(ctx, "web", "fetch", args, want{ok: true, value: `"hello from upstream"`, source: forge.SourcePersisted, gen: 1, calls: 0})
}

func (d *demoRun) stepRepair(ctx context.Context) {
	d.call(ctx, "text", "capitalize", `{"s":"forge"}`, want{ok: true, value: `"Forge"`, source: forge.SourceGenerated, gen: 1, calls: 1})
	d.printf("   gen-1 passed the gate (acceptance example \"go\" -> \"Go\") but slices s[:1] without a check\n")
	d.call(ctx, "text", "capitalize", `{"s":""}`, want{ok: true, value: `""`, source: forge.SourceRepaired, gen: 2, calls: 1, repaired: true})
	a := d.artifact("text", "capitalize")
	d.printf("   now: %s\n", describeArtifact(a))
	if a.History[0].Trigger != "repair:intrinsic" || a.IntrinsicFailureCount != 1 || a.RepairCountSinceRegen != 1 {
		d.differ("text.capitalize: want trigger repair:intrinsic, 1 intrinsic failure, 1 repair; got %s", describeArtifact(a))
	}
	d.call(ctx, "text", "capitalize", `{"s":"again"}`, want{ok: true, value: `"Again"`, source: forge.SourcePersisted, gen: 2, calls: 0})
}

func (d *demoRun) stepBudget(ctx context.Context) {
	d.call(ctx, "text", "lower", `{"s":"OK"}`, want{ok: true, value: `"ok"`, source: forge.SourceGenerated, gen: 1, calls: 1})
	d.printf("   each answer passes the gate but panics on another input length; the budget is %d repairs\n", 3)
	for i, s := range []string{"", "A", "ABC"} {
		d.call(ctx, "text", "lower", fmt.Sprintf(`{"s":%q}`, s), want{ok: true, value: fmt.Sprintf("%q", strings.ToLower(s)),
			source: forge.SourceRepaired, gen: i + 2, calls: 1, repaired: true})
		if a := d.artifact("text", "lower"); a.RepairCountSinceRegen != i+1 {
			d.differ("text.lower: %d repairs since regeneration, want %d", a.RepairCountSinceRegen, i+1)
		}
	}
	d.call(ctx, "text", "lower", `{"s":"ABCD"}`, want{ok: true, value: `"abcd"`, source: forge.SourceRegenerated, gen: 5, calls: 1})
	a := d.artifact("text", "lower")
	d.printf("   now: %s\n", describeArtifact(a))
	if a.History[0].Trigger != "regenerate:budget_exhausted" || a.RepairCountSinceRegen != 0 {
		d.differ("text.lower: want trigger regenerate:budget_exhausted and the budget reset, got %s", describeArtifact(a))
	}
	d.call(ctx, "text", "lower", `{"s":"ABCD"}`, want{ok: true, value: `"abcd"`, source: forge.SourcePersisted, gen: 5, calls: 0})
}

func (d *demoRun) stepOperator(ctx context.Context) {
	start := time.Now()
	o := d.f.Regenerate(ctx, "text", "upper")
	d.printf("   forge regen text upper -> %s\n      %s\n", map[bool]string{true: "ok", false: "failed"}[o.OK], describeMeta(o, time.Since(start)))
	d.check("regen text.upper", o, want{ok: true, source: forge.SourceRegenerated, gen: 2, calls: 1})

	d.operator("forge bless text upper", func() error { return d.f.Bless("text", "upper", false) })
	d.call(ctx, "text", "upper", `{"s":"blessed"}`, want{ok: true, value: `"BLESSED"`, source: forge.SourcePersisted, gen: 2, calls: 0, decision: "execute:blessed"})

	d.operator("forge quarantine text upper", func() error { return d.f.Quarantine("text", "upper") })
	d.call(ctx, "text", "upper", `{"s":"refused"}`, want{ok: false, calls: 0, decision: "refuse:quarantined", errType: forge.TypeRefused,
		msgSubstr: "forge rollback text upper"})

	var rolled *registry.Artifact
	d.operator("forge rollback text upper 1", func() (err error) {
		rolled, err = d.f.Rollback("text", "upper", 1)
		return err
	})
	if rolled != nil {
		d.printf("      now: %s\n", describeArtifact(rolled))
		if rolled.Generation != 3 || rolled.History[0].Trigger != "operator:rollback:gen-1" || rolled.Code != rolled.History[2].Code {
			d.differ("rollback: want gen-3 with gen-1's code and trigger operator:rollback:gen-1, got %s", describeArtifact(rolled))
		}
	}
	d.call(ctx, "text", "upper", `{"s":"rolled back"}`, want{ok: true, value: `"ROLLED BACK"`, source: forge.SourcePersisted, gen: 3, calls: 0})
}

// operator runs an operator verb and prints it like the CLI command that does the same.
func (d *demoRun) operator(cmd string, fn func() error) {
	start := time.Now()
	err := fn()
	took := time.Since(start)
	if err != nil {
		d.printf("   %s -> error: %v\n", cmd, err)
		d.differ("%s: %v", cmd, err)
		return
	}
	d.printf("   %s -> ok, %s\n", cmd, fmtDur(took))
}

// fmtDur prints a duration with three significant digits in the unit that suits it.
func fmtDur(d time.Duration) string {
	switch {
	case d < time.Microsecond:
		return fmt.Sprintf("%dns", d.Nanoseconds())
	case d < time.Millisecond:
		return fmt.Sprintf("%.1fµs", float64(d)/float64(time.Microsecond))
	case d < time.Second:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.2fs", d.Seconds())
}
