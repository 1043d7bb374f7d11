// args: [7]
// kind: compile
// contains: errors.As into &ce
// stage: compile
// backends: yaegi
package artifact

// errors.As into a variable of the file's error type: yaegi v0.16.1 panics at run time ("*target
// must be interface or implement error"). Refused with a hint; wasm answers 7.

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

func Code(k int) int {
	var ce *codeErr
	if errors.As(find(k), &ce) {
		return ce.code
	}
	return 0
}
