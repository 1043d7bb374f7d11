// args: []
// kind: policy
package artifact

import "os"

func Env() string { return os.Getenv("HOME") }
