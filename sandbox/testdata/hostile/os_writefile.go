// args: []
// kind: policy
package artifact

import "os"

func Write() error { return os.WriteFile("/tmp/pwned", []byte("x"), 0o644) }
