// args: [1]
// kind: compile
// contains: errors.Is with errOne
// stage: compile
// backends: yaegi
package artifact

// errors.Is with a target of the file's error type: false on yaegi v0.16.1. Refused with a hint;
// wasm answers true.

import (
	"errors"
	"fmt"
)

type codeErr struct{ code int }

func (e *codeErr) Error() string { return fmt.Sprintf("bad %d", e.code) }

var errOne = &codeErr{1}

func find(k int) error {
	if k == 1 {
		return errOne
	}
	return fmt.Errorf("find: %w", &codeErr{k})
}

func Found(k int) bool { return errors.Is(fmt.Errorf("w: %w", find(k)), errOne) }
