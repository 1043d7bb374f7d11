package yaegi

import "github.com/artifactforge/forge/sandbox"

// Name is the backend's name in contracts ("sandbox": "yaegi") and --sandbox.
const Name = "yaegi"

// Gaps are the interpreter's known gaps, told to the model with every generation for this
// backend; the gate rewrites most of them, and saying so up front saves gate round trips.
const Gaps = `- The interpreter (yaegi) has gaps: do not use the min, max or clear builtins, slices.Sort, "for i := range n"
  over an integer, or rely on Go 1.22 per-iteration loop variables. Write explicit loops.
`

func init() {
	sandbox.Register(sandbox.Backend{
		Name: Name,
		Summary: "Go interpreter: in-process (fastest start, for trusted code: no security boundary) " +
			`or in worker processes with rlimits (limits.isolation "process")`,
		ContainsIsolated: sandbox.IsolationProcess,
		Prompt:           Gaps,
		New: func(c sandbox.Config) (sandbox.Sandbox, error) {
			return New(Options{PoolSize: c.PoolSize, IdleTimeout: c.IdleTimeout, Worker: WorkerConfig{MaxTotal: c.MaxWorkers}}), nil
		},
	})
}
