// args: []
// kind: result
// contains: not today
package artifact

import (
	"encoding/json"
	"errors"
)

type R struct{ A int }

func (R) MarshalJSON() ([]byte, error) { return nil, errors.New("not today") }

// Get returns a json.Marshaler that fails.
func Get() json.Marshaler { return R{1} }
