// args: ["{\"a\":2}"]
// kind: compile
// contains: method expression (*json.Decoder).Decode used as a value
// stage: compile
// backends: yaegi
package artifact

// As gap_methexpr_builder, with (*json.Decoder).Decode. Refused on yaegi; wasm answers 2.

import (
	"encoding/json"
	"strings"
)

func Decode(s string) int {
	var m map[string]int
	dec := json.NewDecoder(strings.NewReader(s))
	decode := (*json.Decoder).Decode
	if err := decode(dec, &m); err != nil {
		return -1
	}
	return m["a"]
}
