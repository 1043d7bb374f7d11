// args: []
// kind: policy
// contains: io.PipeReader is not available
package artifact

import "io"

// F names a type the symbol tables withhold (pipes need goroutines).
func F() int {
	var r *io.PipeReader
	if r == nil {
		return 0
	}
	return 1
}
