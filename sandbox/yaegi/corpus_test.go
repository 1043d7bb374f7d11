package yaegi

import (
	"regexp"
	"testing"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/sandboxtest"
)

func newTestSandbox(t *testing.T) sandbox.Sandbox { return New(Options{PoolSize: 2}) }

// skipUnderRace skips in-process cases that stop the interpreter while it loads the program
// (see raceEnabled): package initializers run under ExecuteWithContext. A call is stopped
// without it (stopInterpreter), so the cases stopped during a call run under -race too.
func skipUnderRace(c sandboxtest.Case) string {
	if !raceEnabled || c.Limits.Isolation == sandbox.IsolationProcess {
		return ""
	}
	if c.Stage != "compile" && !initStops.MatchString(c.Code) {
		return ""
	}
	for _, k := range c.Kinds {
		if k == sandbox.KindDeadline || k == sandbox.KindDepth {
			return "yaegi v0.16.1 ExecuteWithContext races on cancellation (upstream); run without -race"
		}
	}
	return ""
}

// initStops matches code whose package initialization may run into a stop: an init function or
// a package variable initialized by a call.
var initStops = regexp.MustCompile(`(?m)^func init\(|^var \w+ = \w+\(`)

// bothModes runs every corpus case in-process and isolated (except the cases marked for one).
var bothModes = []string{sandboxtest.ModeInProcess, sandboxtest.ModeIsolated}

func TestCorpusValid(t *testing.T) {
	sandboxtest.RunCorpusWith(t, "../testdata/valid", newTestSandbox, sandboxtest.CorpusOptions{Skip: skipUnderRace, Modes: bothModes})
}

func TestCorpusHostile(t *testing.T) {
	sandboxtest.RunCorpusWith(t, "../testdata/hostile", newTestSandbox, sandboxtest.CorpusOptions{Skip: skipUnderRace, Modes: bothModes})
}
