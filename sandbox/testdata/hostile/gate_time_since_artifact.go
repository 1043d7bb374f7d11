// args: []
// kind: policy
// contains: time.Since is not available in the sandbox
package artifact

import "time"

// Age reads the clock through time.Since, which acceptance tests may use and artifacts may not.
func Age() int64 { return int64(time.Since(time.Unix(0, 0))) }
