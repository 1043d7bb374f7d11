package yaegi

import (
	"context"

	"github.com/artifactforge/forge/sandbox"
)

// WorkerConfig says how isolation-mode workers are started.
type WorkerConfig struct {
	// Command is the worker's argv (default: this executable with "sandbox-worker").
	Command []string
	// Env is added to the worker's environment.
	Env []string
	// Max bounds live workers (default GOMAXPROCS).
	Max int
}

type workerPool struct{ cfg WorkerConfig }

func newWorkerPool(cfg WorkerConfig) *workerPool { return &workerPool{cfg: cfg} }

func (w *workerPool) run(ctx context.Context, p *Program, in sandbox.Input) (sandbox.Output, error) {
	return sandbox.Output{}, sandbox.Errorf(sandbox.KindInternal, "isolation mode not implemented yet")
}

func (w *workerPool) close() error { return nil }
