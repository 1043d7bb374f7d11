package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/provider"
	"github.com/artifactforge/forge/sandbox"
)

// slowAfter is how long a step runs before it shows progress: most compiles are cached and
// take milliseconds, and a spinner that flashes for them would be noise.
const slowAfter = time.Second

// slowSteps shows that a slow step (a first wasm build, a compile, acceptance tests) is running:
// a spinner on stderr when stderr is a terminal; with -v, a line when it starts and when it ends
// otherwise. It is nil under --json (nothing of it may mix with a JSON document) and when stderr
// is neither a terminal nor asked to be verbose.
type slowSteps struct {
	w        io.Writer
	terminal bool
	after    time.Duration
	mu       sync.Mutex // one spinner at a time; parallel steps wait for the line
	// width is the terminal's width in columns (0: unknown): a spinner line longer than the
	// terminal wraps, and every redraw then starts a new line under a first one that keeps its
	// first reading ("[0s]"), so the description is cut to fit.
	width int
	// tick is how often the spinner's elapsed time is redrawn (0: every second); now reads the
	// clock (nil: time.Now). Tests set both.
	tick time.Duration
	now  func() time.Time
}

// steps returns the slow-step reporter for this command line, or nil.
func (a *app) steps() *slowSteps {
	if a.jsonOut {
		return nil
	}
	terminal, width := false, 0
	if f, ok := a.stderr.(*os.File); ok {
		terminal = term.IsTerminal(int(f.Fd()))
		if terminal {
			width, _, _ = term.GetSize(int(f.Fd()))
		}
	}
	if !terminal && !a.verbose {
		return nil
	}
	return &slowSteps{w: a.stderr, terminal: terminal, after: slowAfter, width: width}
}

func (p *slowSteps) clock() time.Time {
	if p.now != nil {
		return p.now()
	}
	return time.Now()
}

// spinnerText is a spinner's description: what, with the time since the step started, cut to the
// terminal's width.
func (p *slowSteps) spinnerText(what string, elapsed time.Duration) string {
	suffix := " [" + elapsed.Truncate(time.Second).String() + "]"
	if p.width > 0 {
		room := p.width - len(suffix) - 4 // the spinner, its spaces and the cursor
		if room < 10 {
			room = 10
		}
		if r := []rune(what); len(r) > room {
			what = string(r[:room-1]) + "…"
		}
	}
	return what + suffix
}

// step marks the start of a step described by what; the returned func marks its end. Nothing is
// shown unless the step is still running after p.after.
func (p *slowSteps) step(what string) (done func()) {
	if p == nil {
		return func() {}
	}
	start := p.clock()
	stop, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTimer(p.after)
		defer t.Stop()
		select {
		case <-stop:
			return
		case <-t.C:
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		if !p.terminal {
			fmt.Fprintf(p.w, "forge: %s ...\n", what)
			<-stop
			p.done(what, start)
			return
		}
		// The elapsed time is the step's (since it started, not since the spinner showed), drawn
		// into the description on a ticker of ours: the bar's own timer counts from the bar.
		bar := progressbar.NewOptions(-1,
			progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetDescription(p.spinnerText(what, p.clock().Sub(start))),
			progressbar.OptionSpinnerType(14),
			progressbar.OptionSetElapsedTime(false), // ours is in the description
			progressbar.OptionSetPredictTime(false),
			progressbar.OptionSetRenderBlankState(true),
			progressbar.OptionClearOnFinish(),
		)
		every := p.tick
		if every <= 0 {
			every = time.Second
		}
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				bar.Describe(p.spinnerText(what, p.clock().Sub(start)))
				continue
			case <-stop:
			}
			break
		}
		_ = bar.Finish()
		p.done(what, start)
	}()
	return func() {
		close(stop)
		<-finished
	}
}

// countedStep is a step whose amount of work is known (bench's phases): a bar counting it on a
// terminal, else the start and end lines a step has.
type countedStep struct {
	p     *slowSteps
	what  string
	start time.Time
	bar   *progressbar.ProgressBar
	last  int64
}

// count starts a counted step of total units, shown at once (it is long by nature).
func (p *slowSteps) count(what string, total int64) *countedStep {
	c := &countedStep{p: p, what: what, start: p.clock()}
	if p.terminal {
		c.bar = progressbar.NewOptions64(total,
			progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetDescription(what),
			progressbar.OptionShowCount(),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
	} else {
		fmt.Fprintf(p.w, "forge: %s ...\n", what)
	}
	return c
}

// set moves the count to done (never back).
func (c *countedStep) set(done int64) {
	if c == nil || done <= c.last {
		return
	}
	c.last = done
	if c.bar != nil {
		_ = c.bar.Set64(done)
	}
}

// finish ends the step with the line every step ends with.
func (c *countedStep) finish() {
	if c == nil {
		return
	}
	if c.bar != nil {
		_ = c.bar.Finish()
	}
	c.p.done(c.what, c.start)
}

// done is the line a step ends with.
func (p *slowSteps) done(what string, start time.Time) {
	fmt.Fprintf(p.w, "forge: %s: done in %s\n", what, p.clock().Sub(start).Round(time.Millisecond))
}

// progressSandbox reports slow compiles of the sandbox it wraps.
type progressSandbox struct {
	sandbox.Sandbox
	name  string
	steps *slowSteps
}

func (s *progressSandbox) Compile(ctx context.Context, src sandbox.Source) (sandbox.Program, error) {
	defer s.steps.step(fmt.Sprintf("compiling %s for the %s sandbox (%s)", funcLabel(src.Func), s.name, s.firstBuild()))()
	return s.Sandbox.Compile(ctx, src)
}

// firstBuild says why a first build takes a while: on a machine not warmed yet, the toolchain.
func (s *progressSandbox) firstBuild() string {
	if s.NeedsWarm() {
		return "the first on this machine: " + warmingWhat
	}
	return "a first build takes a while; later ones are cached"
}

// warmingWhat is what a sandbox warm-up does (sandbox.Warmer; the wasm backend's).
const warmingWhat = "the Go toolchain compiles its standard library for wasm once: seconds for calls, half a minute for tests"

// NeedsWarm and Warm pass sandbox.Warmer through, the warm-up shown as a step.
func (s *progressSandbox) NeedsWarm() bool {
	w, ok := s.Sandbox.(sandbox.Warmer)
	return ok && w.NeedsWarm()
}

func (s *progressSandbox) Warm(ctx context.Context) error {
	w, ok := s.Sandbox.(sandbox.Warmer)
	if !ok {
		return nil
	}
	defer s.steps.step(fmt.Sprintf("preparing the %s sandbox (%s)", s.name, warmingWhat))()
	return w.Warm(ctx)
}

func funcLabel(fn string) string {
	if fn == "" {
		return "the code"
	}
	return fn
}

// progressTester is progressSandbox for a sandbox that also runs acceptance tests.
type progressTester struct {
	*progressSandbox
	tester sandbox.Tester
}

func (s progressTester) Test(ctx context.Context, src sandbox.Source, testCode string, in sandbox.Input) ([]sandbox.TestResult, error) {
	what := fmt.Sprintf("building and running the acceptance tests of %s in the %s sandbox", funcLabel(src.Func), s.name)
	if s.NeedsWarm() {
		what += " (the first on this machine: " + warmingWhat + ")"
	}
	defer s.steps.step(what)()
	return s.tester.Test(ctx, src, testCode, in)
}

// withProgress wraps sb so its slow steps show; with no reporter it returns sb itself.
func withProgress(sb sandbox.Sandbox, name string, steps *slowSteps) sandbox.Sandbox {
	if steps == nil || sb == nil {
		return sb
	}
	ps := &progressSandbox{Sandbox: sb, name: name, steps: steps}
	if t, ok := sb.(sandbox.Tester); ok {
		return progressTester{ps, t}
	}
	return ps
}

// verboseProvider tells every retry its provider makes on stderr (-v).
type verboseProvider struct {
	provider.Provider
	w io.Writer
}

func (p verboseProvider) Generate(ctx context.Context, req provider.Request) (provider.Answer, error) {
	ctx = provider.WithRetryNotify(ctx, func(e provider.RetryEvent) {
		fmt.Fprintf(p.w, "forge: provider: %s.%s: %v; retry %d of %d in %s\n", req.Role, req.Method, e.Err, e.Retry, e.Of, e.Wait.Round(time.Millisecond))
	})
	return p.Provider.Generate(ctx, req)
}

func backendLabel(name string) string {
	if name == "" {
		return "default"
	}
	return name
}

// line prints one line about a step (a re-ask after a failed verification, how a generation
// ended) between spinners.
func (p *slowSteps) line(msg string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "forge: %s\n", msg)
}

// generationProgress carries a progress func (forge.WithProgress) in ctx that shows the steps of
// a generation the call leads: while the model writes, a step (a spinner with the time waited on
// a terminal, a line with -v) that says what forge waits for; a re-ask after an answer failed
// verification, and how the generation ended, as a line of their own. With no reporter (--json,
// or neither a terminal nor -v) ctx is returned as it is. The returned func ends a step still
// shown.
func (a *app) generationProgress(ctx context.Context) (context.Context, func()) {
	steps := a.steps()
	if steps == nil {
		return ctx, func() {}
	}
	var mu sync.Mutex
	var done func()
	end := func() {
		if done != nil {
			done()
			done = nil
		}
	}
	ctx = forge.WithProgress(ctx, func(g forge.GenerationStep) {
		mu.Lock()
		defer mu.Unlock()
		end()
		switch g.Step {
		case forge.StepAsking:
			done = steps.step(g.Message)
		case forge.StepRejected:
			steps.line(g.Message)
		case forge.StepPersisted, forge.StepFailed:
			if a.verbose {
				steps.line(g.Message)
			}
		}
	})
	return ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		end()
	}
}
