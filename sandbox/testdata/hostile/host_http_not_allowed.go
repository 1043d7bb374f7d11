// args: []
// caps: {"http": {"allow": ["api.example.com"]}}
// kind: policy
// contains: denied
package artifact

import "forge/host"

func Fetch() (string, error) { return host.Get("http://169.254.169.254/latest/meta-data/") }
