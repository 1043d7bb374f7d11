package yaegi

import "github.com/artifactforge/forge/sandbox"

func init() {
	sandbox.Register(sandbox.Backend{
		Name: "yaegi",
		Summary: "Go interpreter: in-process (fastest start, for trusted code: no security boundary) " +
			`or in worker processes with rlimits (limits.isolation "process")`,
		New: func(c sandbox.Config) (sandbox.Sandbox, error) {
			return New(Options{PoolSize: c.PoolSize, IdleTimeout: c.IdleTimeout, Worker: WorkerConfig{MaxTotal: c.MaxWorkers}}), nil
		},
	})
}
