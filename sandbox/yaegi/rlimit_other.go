//go:build !(linux || darwin || freebsd)

package yaegi

import (
	"errors"
	"os"
	"runtime"
)

// applyRlimits fails where the worker cannot be capped: process isolation without its memory and
// CPU caps would promise what it does not do.
func applyRlimits(memLimit int64, cpuSeconds int) error {
	return errors.New("process isolation needs rlimits, which " + runtime.GOOS + " lacks: use the wasm sandbox for hard isolation here")
}

func exitSignal(*os.ProcessState) string { return "" }

func maxRSS(*os.ProcessState) int64 { return 0 }
