package main

import (
	"os"
	"testing"

	"github.com/artifactforge/forge/sandbox/yaegi"
)

// cliEnv makes the test binary behave as the forge CLI (see TestHostileCorpusThroughRun).
const cliEnv = "FORGE_TEST_AS_CLI"

// TestMain lets the test binary serve isolation workers, as main does, and act as the forge CLI
// when cliEnv is set.
func TestMain(m *testing.M) {
	yaegi.MaybeServeWorker()
	if os.Getenv(cliEnv) == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
