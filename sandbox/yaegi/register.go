package yaegi

import "github.com/artifactforge/forge/sandbox"

func init() {
	sandbox.Register(sandbox.Backend{
		Name: "yaegi",
		Summary: "Go interpreter: in-process (fastest start, for trusted code: no security boundary) " +
			`or in worker processes with rlimits (limits.isolation "process")`,
		New: func(sandbox.Config) (sandbox.Sandbox, error) { return New(Options{}), nil },
	})
}
