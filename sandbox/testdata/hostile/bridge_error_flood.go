// args: []
// timeout: 5s
// kind: returned
// contains: more bytes cut]
package artifact

import (
	"errors"
	"strings"
)

// Flood returns a 40 MiB error message: the host keeps at most sandbox.MaxErrorBytes of it (it
// was printed twice and stored as the artifact's last failure reason, a 42 MB file).
func Flood() (int, error) {
	return 0, errors.New(strings.Repeat("flood ", 40<<20/6))
}
