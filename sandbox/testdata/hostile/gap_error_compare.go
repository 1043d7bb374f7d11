// args: [1]
// kind: compile
// contains: compares an error with errOne
// stage: compile
// backends: yaegi
package artifact

// An error compared with a value of the file's error type: yaegi v0.16.1 compares its wrapper
// and answers false. Refused with a hint on yaegi; wasm answers true.

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

func Found(k int) bool { _ = errors.New; return find(k) == errOne }
