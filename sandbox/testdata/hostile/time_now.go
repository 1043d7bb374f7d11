// args: []
// kind: policy
// contains: host.Now
package artifact

import "time"

func Year() int { return time.Now().Year() }
