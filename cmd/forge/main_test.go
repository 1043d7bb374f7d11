package main

import (
	"os"
	"testing"

	"github.com/artifactforge/forge/sandbox/yaegi"
)

// TestMain lets the test binary serve isolation workers, as main does, for the tests that run
// commands with --isolation process in this process.
func TestMain(m *testing.M) {
	yaegi.MaybeServeWorker()
	os.Exit(m.Run())
}
