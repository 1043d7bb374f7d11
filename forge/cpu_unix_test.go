//go:build unix

package forge

import (
	"syscall"
	"testing"
	"time"
)

// processCPU is the CPU time this process has used (user + system), the event writer's
// goroutine included: on a machine shared with other work it varies much less than wall time.
func processCPU(b *testing.B) (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
