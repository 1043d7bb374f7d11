package yaegi

import (
	"testing"
	"time"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/sandboxtest"
)

// FuzzIsolated feeds arbitrary source through parse, policy, compile and run in worker processes:
// whatever the program does, the test process survives and every call answers within its bound
// (`make fuzz`). In-process yaegi is for trusted code and is not fuzzed with hostile programs.
func FuzzIsolated(f *testing.F) {
	sandboxtest.FuzzSeeds(f, "../testdata/valid", "../testdata/hostile")
	sb := New(Options{PoolSize: 1})
	f.Cleanup(func() { sb.Close() })
	f.Fuzz(func(t *testing.T, code, args string) {
		sandboxtest.FuzzProgram(t, sb, code, args, sandboxtest.FuzzOptions{
			Limits: sandbox.Limits{Isolation: sandbox.IsolationProcess},
			Slack:  500 * time.Millisecond, // a worker killed by its code is restarted before the answer
		})
	})
}
