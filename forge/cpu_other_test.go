//go:build !unix

package forge

import (
	"testing"
	"time"
)

// processCPU is not measured here (see cpu_unix_test.go).
func processCPU(*testing.B) (time.Duration, bool) { return 0, false }

// usage is not measured here (see cpu_unix_test.go): every figure is zero.
type usage struct {
	sys            time.Duration
	minflt, majflt int64
}

func (u usage) sub(usage) usage { return u }

func rusage(*testing.B) usage { return usage{} }
