// args: []
// kind: compile|panic
// backends: yaegi
package artifact

import (
	"errors"
	"io"
)

// Swap tries to replace io.ErrUnexpectedEOF and io.Discard.
func Swap() int {
	io.ErrUnexpectedEOF = errors.New("mine")
	io.Discard = nil
	return 1
}
