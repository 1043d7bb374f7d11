// args: []
// caps: {"log": true}
// timeout: 300ms
// kind: deadline
package artifact

import (
	"fmt"

	"forge/host"
)

type slow struct{ n *int }

func (s slow) String() string {
	for {
		*s.n++
	}
}

// Say logs a fmt.Stringer whose String method never returns.
func Say() int {
	n := 0
	var s fmt.Stringer = slow{&n}
	host.Logf("%v", s)
	return 1
}
