// args: []
// kind: policy
package artifact

import "syscall"

func Kill() error { return syscall.Kill(1, syscall.SIGKILL) }
