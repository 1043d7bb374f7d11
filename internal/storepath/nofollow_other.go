//go:build !unix

package storepath

// Systems without O_NOFOLLOW rely on Check (Lstat) alone.
const oNoFollow = 0

const oNonBlock = 0

func isLoop(error) bool { return false }
