// args: []
// kind: policy
package artifact

import "forge/host"

func Delegate() (string, error) { return host.Call("other", "method", map[string]int{"x": 1}) }
