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
}

// steps returns the slow-step reporter for this command line, or nil.
func (a *app) steps() *slowSteps {
	if a.jsonOut {
		return nil
	}
	terminal := false
	if f, ok := a.stderr.(*os.File); ok {
		terminal = term.IsTerminal(int(f.Fd()))
	}
	if !terminal && !a.verbose {
		return nil
	}
	return &slowSteps{w: a.stderr, terminal: terminal, after: slowAfter}
}

// step marks the start of a step described by what; the returned func marks its end. Nothing is
// shown unless the step is still running after p.after.
func (p *slowSteps) step(what string) (done func()) {
	if p == nil {
		return func() {}
	}
	start := time.Now()
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
			fmt.Fprintf(p.w, "forge: %s: done in %s\n", what, time.Since(start).Round(time.Millisecond))
			return
		}
		bar := progressbar.NewOptions(-1,
			progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetDescription(what),
			progressbar.OptionSpinnerType(14),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionSetRenderBlankState(true),
			progressbar.OptionClearOnFinish(),
		)
		<-stop
		_ = bar.Finish()
		fmt.Fprintf(p.w, "forge: %s: done in %s\n", what, time.Since(start).Round(time.Millisecond))
	}()
	return func() {
		close(stop)
		<-finished
	}
}

// progressSandbox reports slow compiles of the sandbox it wraps.
type progressSandbox struct {
	sandbox.Sandbox
	name  string
	steps *slowSteps
}

func (s *progressSandbox) Compile(ctx context.Context, src sandbox.Source) (sandbox.Program, error) {
	defer s.steps.step(fmt.Sprintf("compiling %s for the %s sandbox (a first build takes a while; later ones are cached)", funcLabel(src.Func), s.name))()
	return s.Sandbox.Compile(ctx, src)
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
	defer s.steps.step(fmt.Sprintf("building and running the acceptance tests of %s in the %s sandbox", funcLabel(src.Func), s.name))()
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
