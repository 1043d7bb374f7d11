// args: []
// caps: {"now": true}
// want: true
package artifact

import "forge/host"

func After2020() bool { return host.Now().Year() > 2020 }
