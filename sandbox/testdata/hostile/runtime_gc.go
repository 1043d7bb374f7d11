// args: []
// kind: policy
package artifact

import "runtime"

func Procs() int { return runtime.NumGoroutine() }
