package wasm

import (
	"testing"

	"github.com/artifactforge/forge/sandbox/sandboxtest"
)

// TestTestFileMayUseTheClock: issue 14 on this backend (see sandboxtest.RunClockTests): one test
// module is built; the two refusals come from the gate, before any build.
func TestTestFileMayUseTheClock(t *testing.T) {
	sandboxtest.RunClockTests(t, shared)
	sandboxtest.RunHumanEvalClockTests(t, shared)
}
