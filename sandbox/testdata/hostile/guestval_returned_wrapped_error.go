// args: []
// kind: returned|panic
package artifact

import "fmt"

type bad struct{}

func (bad) Error() string { panic("wrapped text exploded") }

// Fail wraps a bad error: fmt.Errorf calls Error while the guest runs (the host never does).
func Fail() (string, error) {
	var e error = bad{}
	return "", fmt.Errorf("wrapped: %w", e)
}
