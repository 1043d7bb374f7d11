package forge

import (
	"context"
	"time"

	"github.com/artifactforge/forge/sandbox"
)

// WarmUp prepares the default placement's backend ahead of the first method if it says it needs
// it (sandbox.Warmer: the wasm backend on a machine whose Go build cache has no standard library
// for wasip1 yet: 42 s of CPU, once). started, if not nil, is called just before the warm-up begins, so
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
