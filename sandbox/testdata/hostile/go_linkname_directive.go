// args: []
// kind: policy
// contains: directive
package artifact

import _ "strings"

//go:linkname nanotime runtime.nanotime
func nanotime() int64

func Now() int64 { return 0 }
