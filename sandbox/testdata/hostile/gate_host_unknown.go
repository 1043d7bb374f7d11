// args: []
// kind: policy
// contains: host.Exec is not available
package artifact

import "forge/host"

// Run calls a host function that does not exist in forge/host.
func Run() string { return host.Exec("id") }
