//go:build !unix

package main

import "time"

// selfCPU is 0 where getrusage is missing: the CPU columns then read 0.
func selfCPU() time.Duration { return 0 }
