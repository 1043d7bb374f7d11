//go:build !linux

package sandboxtest

import "time"

// ThreadCPU is the calling thread's CPU time where the platform gives it (Linux); elsewhere ok
// is false.
func ThreadCPU() (d time.Duration, ok bool) { return 0, false }
