// args: []
// kind: policy
// contains: time.Now is not available
package artifact

import "time"

// clock holds time.Now as a value: no call, the same refusal.
var clock = time.Now

func Year() int { return clock().Year() }
