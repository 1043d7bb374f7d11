package sandbox

import "context"

// Warmer is a backend whose first build on a machine is slow because its toolchain prepares itself
// once: the wasm backend's Go toolchain compiles the standard library (and testify) for wasip1 into
// its build cache, 38 s of CPU once (see RATIONALE.md). A command that starts up warms such a backend
// ahead of its first method, and says so, rather than leaving the wait inside a first call.
type Warmer interface {
	// NeedsWarm reports, without building anything, whether this machine has not warmed the
	// backend yet with this toolchain.
	NeedsWarm() bool
	// Warm prepares the backend (a no-op's cost once it is warm); builds started meanwhile wait for
	// it rather than repeat it.
	Warm(ctx context.Context) error
}
