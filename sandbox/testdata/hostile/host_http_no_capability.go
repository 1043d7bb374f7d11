// args: []
// kind: policy
// contains: not granted
package artifact

import "forge/host"

func Fetch() (string, error) { return host.Get("https://api.example.com/") }
