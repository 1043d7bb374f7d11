package yaegi

import (
	"os"
	"testing"
	"time"
)

// hangBound tells a hang from a slow, shared machine in tests that end a call or a sandbox: what
// those take is logged, and measured by benchmarks, never asserted against a tight figure.
const hangBound = 10 * time.Second

// hostZone is the zone the test binary runs in (and its isolation workers, which inherit the
// environment): one with an offset and daylight saving time, so that a sandboxed time that
// leaks the host's zone shows (sandbox/testdata/hostile/sib_tz_*.go; TestHostZoneIsNotUTC).
const hostZone = "America/New_York"

// TestMain lets the test binary double as the isolation worker: the sandbox re-executes it with
// WorkerEnv set.
func TestMain(m *testing.M) {
	// Before anything reads time.Local (it is initialized once, from TZ, on first use).
	os.Setenv("TZ", hostZone)
	MaybeServeWorker()
	os.Exit(m.Run())
}
