package forge

import (
	"context"
	"strings"
	"time"

	"github.com/artifactforge/forge/sandbox"
)

// WarmUp prepares the default placement's backend ahead of the first method if it says it needs
// it (sandbox.Warmer: the wasm backend on a machine whose Go build cache has no standard library
// for wasip1 yet: 38 s of CPU, once). started, if not nil, is called just before the warm-up begins, so
// that the caller can say what it waits for; warmed says whether there was one, took how long it
// took. A backend with nothing to warm (yaegi, a wasm toolchain already warm) costs nothing.
func (f *Forge) WarmUp(ctx context.Context, started func()) (warmed bool, took time.Duration, err error) {
	sb, err := f.sandbox(f.placement.Backend)
	if err != nil {
		return false, 0, err
	}
	w, ok := sb.(sandbox.Warmer)
	if !ok || !w.NeedsWarm() {
		return false, 0, nil
	}
	if started != nil {
		started()
	}
	start := time.Now()
	err = w.Warm(ctx)
	return true, time.Since(start), err
}

// BackgroundWarmUp decides whether a command starting up should warm the machine's default
// backend in a detached process that outlives it (sandbox.Backend.NeedsWarm and Warm): on a fresh
// machine the first wasm build waits for the Go toolchain to compile its standard library for
// wasip1 (~6 s of CPU for a call module), and a warm-up started by the first forge command (the
// README's `forge --version`, `forge role add`) has done it, or part of it, by the time a first
// call builds. operator is $FORGE_SANDBOX, setting $FORGE_WARM (warmUpOn: "off", and any value
// that is not plainly on, turns it off); the default is what ChooseDefault picks. It returns the
// backend to warm.
func BackgroundWarmUp(operator, setting string, backends []sandbox.Backend) (sandbox.Backend, bool) {
	if !warmUpOn(setting) {
		return sandbox.Backend{}, false
	}
	p, err := ChooseDefault(operator, backends)
	if err != nil {
		return sandbox.Backend{}, false
	}
	for _, b := range backends {
		if b.Name == p.Backend {
			return b, b.NeedsWarm != nil && b.Warm != nil && b.NeedsWarm()
		}
	}
	return sandbox.Backend{}, false
}

// warmUpOn reads $FORGE_WARM: unset, "on", "1", "true" or "yes" (any case) leave the background
// warm-up on; anything else, "off" and "0" and "false" included and a misspelling too, turns it
// off: an operator who set it meant to change something, and a process not started is the safe
// reading (the first build warms then, as it would anyway).
func warmUpOn(setting string) bool {
	switch strings.ToLower(strings.TrimSpace(setting)) {
	case "", "on", "1", "true", "yes":
		return true
	}
	return false
}
