// args: []
// timeout: 5s
// kind: depth
package artifact

import "fmt"

type loop struct{ n int }

func (l loop) String() string {
	var s fmt.Stringer = loop{l.n + 1}
	return fmt.Sprint(s)
}

// Show formats a Stringer whose String formats another one, through fmt, forever.
func Show() string {
	var s fmt.Stringer = loop{}
	return fmt.Sprint(s)
}
