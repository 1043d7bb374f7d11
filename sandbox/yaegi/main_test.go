package yaegi

import (
	"os"
	"testing"
)

// TestMain lets the test binary double as the isolation worker: the sandbox re-executes it with
// WorkerEnv set.
func TestMain(m *testing.M) {
	MaybeServeWorker()
	os.Exit(m.Run())
}
