// args: []
// kind: policy
// contains: import "math/rand" is not allowed
package artifact

import (
	"math/rand"
	"time"
)

// Roll seeds math/rand from the clock as a test file may; an artifact may not.
func Roll() int {
	r := rand.New(rand.NewSource(time.Unix(0, 0).UnixNano()))
	return r.Intn(6)
}
