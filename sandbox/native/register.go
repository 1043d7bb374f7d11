package native

import (
	"bytes"
	"errors"
	"os"
	"runtime"
	"strings"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/internal/guestgen"
)

func init() {
	sandbox.Register(sandbox.Backend{
		Name:     Name,
		Summary:  "native code in locked-down worker processes (seccomp allowlist, rlimits, killed at the deadline); opt-in, Linux, needs a Go toolchain",
		Contains: true,
		OptIn:    true,
		Available: func() error {
			if err := available(); err != nil {
				return err
			}
			_, err := guestgen.FindToolchain("")
			return err
		},
		New: func(c sandbox.Config) (sandbox.Sandbox, error) {
			return New(Options{CacheDir: c.CacheDir, RecordDir: c.RecordDir, PoolSize: c.PoolSize, MaxWorkers: c.MaxWorkers,
				IdleTimeout: c.IdleTimeout})
		},
		PruneCache: PruneCache,
	})
}

// available says whether this machine can run native workers: Linux on amd64 or arm64 with
// seccomp in its kernel (a "Seccomp:" line in /proc/self/status).
func available() error {
	if runtime.GOOS != "linux" || hostSysnums.arch != runtime.GOARCH {
		return errNotLinux
	}
	b, err := os.ReadFile("/proc/self/status")
	if err != nil || !bytes.Contains(b, []byte("\nSeccomp:")) {
		return errors.New("the kernel has no seccomp (no Seccomp: line in /proc/self/status)")
	}
	noexec, _ := os.ReadFile("/proc/sys/vm/memfd_noexec") // absent before Linux 6.3: memfds execute
	return memfdExec(string(noexec))
}

// memfdExec says whether workers can be exec'd from memfds (image.go) under vm.memfd_noexec's
// value: 2 refuses every executable memfd.
func memfdExec(noexec string) error {
	if strings.TrimSpace(noexec) == "2" {
		return errors.New("vm.memfd_noexec is 2: workers run from sealed memfds, which this kernel refuses to execute (set it to 0 or 1)")
	}
	return nil
}
