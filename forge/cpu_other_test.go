//go:build !unix

package forge

import (
	"testing"
	"time"
)

// processCPU is not measured here (see cpu_unix_test.go).
func processCPU(*testing.B) (time.Duration, bool) { return 0, false }
