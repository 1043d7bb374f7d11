//go:build unix

package command

import (
	"os/exec"
	"syscall"
)

// killGroup runs the program in its own process group and kills the whole group on timeout,
// so a shell script's children do not outlive the call.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
