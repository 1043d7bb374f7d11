//go:build unix

package storepath

import (
	"errors"
	"syscall"
)

const oNoFollow = syscall.O_NOFOLLOW

// oNonBlock keeps an open of a named pipe from waiting for the other end.
const oNonBlock = syscall.O_NONBLOCK

func isLoop(err error) bool { return errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EMLINK) }
