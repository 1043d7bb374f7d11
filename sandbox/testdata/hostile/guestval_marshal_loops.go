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

type Out struct{ M json.Marshaler }

// Get returns a struct with a json.Marshaler field whose MarshalJSON never returns.
func Get() Out { return Out{M: R{1}} }
