// args: []
// kind: compile|panic
// backends: yaegi
// (compiled Go lets a program write its own copy of the variable; the in-process interpreter
// must not let it reach the host's, so the expectation is the interpreter's)
package artifact

import "io"

// Clobber tries to set io.EOF to nil: every reader in the host would then spin forever.
func Clobber() int {
	io.EOF = nil
	return 1
}
