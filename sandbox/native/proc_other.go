//go:build !linux

package native

import (
	"os"
	"syscall"
)

// The backend runs on Linux only (available says so); these keep the package building elsewhere.

func pipe(bool) (r, w *os.File, err error) { return nil, nil, errNotLinux }

func procAttr() *syscall.SysProcAttr { return nil }

func killGroup(int) {}

func sealedFile([]byte, string) (*os.File, error) { return nil, errNotLinux }
