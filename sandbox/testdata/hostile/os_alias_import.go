// args: []
// kind: policy
package artifact

import o "os"

func Env() []string { return o.Environ() }
