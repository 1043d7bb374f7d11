// args: []
// kind: policy
package artifact

import "runtime/debug"

func Limit() int64 { return debug.SetMemoryLimit(1) }
