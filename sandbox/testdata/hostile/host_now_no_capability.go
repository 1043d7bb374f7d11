// args: []
// kind: policy
package artifact

import "forge/host"

func Year() int { return host.Now().Year() }
