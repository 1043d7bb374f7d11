// args: [2]
// caps: {"log": true}
// want: 4
package artifact

import "forge/host"

func Double(x int) int {
	host.Logf("doubling %d", x)
	return 2 * x
}
