// args: []
// kind: policy
// contains: import "testing" is not allowed
package artifact

import "testing"

// Short imports testing, which only acceptance tests may.
func Short() bool { return testing.Short() }
