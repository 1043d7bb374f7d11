//go:build unix

package storepath

import (
	"errors"
	"syscall"
)

const oNoFollow = syscall.O_NOFOLLOW

func isLoop(err error) bool { return errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EMLINK) }
