// args: []
// kind: panic|result
// contains: hidden marshaler
package artifact

import "encoding/json"

type R struct{ A int }

func (R) MarshalJSON() ([]byte, error) { panic("hidden marshaler") }

// Get hides a panicking json.Marshaler behind an any result (a builtin result type).
func Get() any {
	var m json.Marshaler = R{1}
	return m
}
