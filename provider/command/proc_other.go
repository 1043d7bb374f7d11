//go:build !unix

package command

import "os/exec"

// killGroup is the default kill on systems without process groups.
func killGroup(*exec.Cmd) {}
