// args: []
// caps: {"rand": true}
// want: true
package artifact

import "forge/host"

func InRange() bool {
	x := host.Rand()
	return x >= 0 && x < 1 && host.RandIntn(3) < 3
}
