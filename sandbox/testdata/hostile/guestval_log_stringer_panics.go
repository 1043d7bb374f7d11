// args: []
// caps: {"log": true}
// want: 1
package artifact

import (
	"fmt"

	"forge/host"
)

type bad struct{}

func (bad) String() string { panic("stringer exploded") }

// Say logs a fmt.Stringer whose String method panics: fmt reports it inside the guest, the call
// goes on.
func Say() int {
	var s fmt.Stringer = bad{}
	host.Logf("%v", s)
	return 1
}
