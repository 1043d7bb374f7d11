// args: [2]
// kind: panic|result
// contains: map marshaler
package artifact

import "encoding/json"

type R struct{ A int }

func (R) MarshalJSON() ([]byte, error) { panic("map marshaler") }

// Get hides a panicking json.Marshaler in a map[string]any, with an error result too.
func Get(n int) (map[string]any, error) {
	var m json.Marshaler = R{n}
	return map[string]any{"n": n, "r": m}, nil
}
