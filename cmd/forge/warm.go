package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"time"

	"golang.org/x/term"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/sandbox"
)

// warmAtStart warms the default sandbox in the background when serve starts (forge.WarmUp), so
// that the first method on a fresh machine does not wait for the wasm toolchain: the log says when
// it starts and how long it took (and on a terminal a spinner shows it).
func warmAtStart(ctx context.Context, f *forge.Forge, log *slog.Logger) {
	sb := slog.String("sandbox", f.DefaultPlacement().String())
	warmed, took, err := f.WarmUp(ctx, func() {
		log.Info("preparing the sandbox in the background: "+warmingWhat, sb)
	})
	switch {
	case err != nil && ctx.Err() != nil:
		// serve is stopping; the build goes on on its own and lands in the toolchain's cache.
	case err != nil:
		log.Warn("sandbox warm-up failed; the first build will try again", sb, slog.String("error", err.Error()))
	case warmed:
		log.Info("sandbox ready", sb, slog.String("took", took.Round(time.Millisecond).String()))
	}
}

// warmUp prepares the demo's sandbox before its first call (forge.WarmUp), saying so and how long
// it took: on a fresh machine the wasm toolchain's one-off work would otherwise hide in step 1.
func (d *demoRun) warmUp(ctx context.Context, steps *slowSteps) {
	done := func() {}
	warmed, took, err := d.f.WarmUp(ctx, func() {
		d.printf("\npreparing the %s sandbox (%s) ...\n", d.placement, warmingWhat)
		done = steps.step("preparing the " + d.placement + " sandbox")
	})
	done()
	switch {
	case err != nil:
		d.printf("   the warm-up failed (the first call tries again): %v\n", err)
	case warmed:
		d.printf("   sandbox ready in %s\n", took.Round(100*time.Millisecond))
	}
}

// warmChildArg is the command line of the detached warm-up process (main runs it, not cobra).
const warmChildArg = "__warm-sandbox"

// warmInBackground starts the machine's warm-up of the default sandbox in a detached process when
// forge.BackgroundWarmUp says so, so that it goes on after this command ends: the first forge
// command on a fresh machine (`forge --version`, `forge role add`) starts the Go toolchain's
// one-off work, and a first call that builds meanwhile waits for it (the machine's lock) instead of
// doing it a second time. On a terminal it says so in one line. It returns whether it started one.
func warmInBackground(args []string, stderr io.Writer) bool {
	if !warmsInBackground(args) {
		return false
	}
	b, ok := forge.BackgroundWarmUp(os.Getenv("FORGE_SANDBOX"), os.Getenv("FORGE_WARM"), sandbox.Backends())
	if !ok {
		return false
	}
	exe, err := os.Executable()
	if err != nil {
		return false
	}
	cmd := exec.Command(exe, warmChildArg)
	detach(cmd) // its own session: a Ctrl-C of this command does not stop it
	if cmd.Start() != nil {
		return false
	}
	go func() { _ = cmd.Wait() }() // reaped if it ends first (serve, mcp); a command's exit leaves it running
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprintf(f, "forge: preparing the %s sandbox in the background (%s); a first call meanwhile waits for it\n", b.Name, warmingWhat)
	}
	return true
}

// warmsInBackground says whether a command line may start the background warm-up: not help or
// shell completion (run at every Tab), nor the warm-up process itself.
func warmsInBackground(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return true
		case "help", "-h", "--help", "completion", "__complete", "__completeNoDesc", warmChildArg:
			return false
		}
	}
	return true
}

// warmChild is the detached warm-up process: it warms the default backend (sandbox.Backend.Warm)
// and exits; a failure is left to the first build, which meets it again and reports it.
func warmChild() int {
	b, ok := forge.BackgroundWarmUp(os.Getenv("FORGE_SANDBOX"), "", sandbox.Backends())
	if !ok {
		return 0
	}
	if err := b.Warm(context.Background()); err != nil {
		return 1
	}
	return 0
}
