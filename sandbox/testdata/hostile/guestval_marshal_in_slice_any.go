// args: []
// timeout: 300ms
// kind: deadline
package artifact

import "encoding/json"

type R struct{ A int }

func (r R) MarshalJSON() ([]byte, error) {
	for {
		r.A++
	}
}

// Get hides a looping json.Marshaler in a []any result.
func Get() []any {
	var m json.Marshaler = R{2}
	return []any{1, "x", m}
}
