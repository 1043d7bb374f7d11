//go:build !linux

package wasm

import "os/exec"

// boundBuild: outside Linux the deadline stops the go command only (its compiler and linker
// finish on their own).
func boundBuild(*exec.Cmd) {}

// limitBuildData: outside Linux go build runs without a data limit (no prlimit); the deadline
// still bounds it.
func limitBuildData(int, uint64) error { return nil }
