// args: []
// timeout: 5s
// kind: depth
package artifact

import "encoding/json"

type node struct{ n int }

func (v node) MarshalJSON() ([]byte, error) {
	var m json.Marshaler = node{v.n + 1}
	return json.Marshal(m)
}

// Encode marshals a value whose MarshalJSON marshals another one, through encoding/json, forever.
func Encode() string {
	var m json.Marshaler = node{}
	b, _ := json.Marshal(m)
	return string(b)
}
