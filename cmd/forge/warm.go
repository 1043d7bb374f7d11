package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/artifactforge/forge/forge"
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
