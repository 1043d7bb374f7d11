// args: []
// timeout: 300ms
// kind: deadline
package artifact

import "fmt"

type slow struct{ n *int }

func (s slow) String() string {
	for {
		*s.n++
	}
}

// Boom panics with a Stringer whose String method never returns.
func Boom() int {
	n := 0
	var s fmt.Stringer = slow{&n}
	panic(s)
}
