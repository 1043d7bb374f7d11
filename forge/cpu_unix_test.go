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

// usage is what getrusage says this process used: CPU time in the kernel and page faults.
type usage struct {
	sys            time.Duration
	minflt, majflt int64
}

func (u usage) sub(v usage) usage {
	return usage{u.sys - v.sys, u.minflt - v.minflt, u.majflt - v.majflt}
}

func rusage(b *testing.B) usage {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return usage{time.Duration(ru.Stime.Nano()), ru.Minflt, ru.Majflt}
}
