package yaegi

import (
	"testing"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/sandboxtest"
)

func newTestSandbox(t *testing.T) sandbox.Sandbox { return New(Options{PoolSize: 2}) }

// skipUnderRace skips in-process cases that stop the interpreter (see raceEnabled).
func skipUnderRace(c sandboxtest.Case) string {
	if !raceEnabled || c.Limits.Isolation == sandbox.IsolationProcess {
		return ""
	}
	for _, k := range c.Kinds {
		if k == sandbox.KindDeadline || k == sandbox.KindDepth {
			return "yaegi v0.16.1 ExecuteWithContext races on cancellation (upstream); run without -race"
		}
	}
	return ""
}

// bothModes runs every corpus case in-process and isolated (except the cases marked for one).
var bothModes = []string{sandboxtest.ModeInProcess, sandboxtest.ModeIsolated}

func TestCorpusValid(t *testing.T) {
	sandboxtest.RunCorpusWith(t, "../testdata/valid", newTestSandbox, sandboxtest.CorpusOptions{Skip: skipUnderRace, Modes: bothModes})
}

func TestCorpusHostile(t *testing.T) {
	sandboxtest.RunCorpusWith(t, "../testdata/hostile", newTestSandbox, sandboxtest.CorpusOptions{Skip: skipUnderRace, Modes: bothModes})
}
