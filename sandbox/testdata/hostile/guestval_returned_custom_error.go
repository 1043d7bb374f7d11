// args: [2]
// kind: returned
// contains: custom text 2
package artifact

import "fmt"

type myErr struct{ n int }

func (e *myErr) Error() string { return fmt.Sprintf("custom text %d", e.n) }

// Check returns an error type declared in the file: its text is taken inside the guest (before
// issue 8 the direct call dropped such an error and returned null).
func Check(n int) (int, error) {
	if n > 1 {
		return 0, &myErr{n}
	}
	return n, nil
}
