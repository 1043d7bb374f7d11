// args: []
// kind: panic|result
// contains: marshal exploded
package artifact

import "encoding/json"

type R struct{ A int }

func (R) MarshalJSON() ([]byte, error) { panic("marshal exploded") }

// Get returns a json.Marshaler whose MarshalJSON panics.
func Get() json.Marshaler { return R{1} }
