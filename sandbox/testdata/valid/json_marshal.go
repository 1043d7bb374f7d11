// args: ["x", 2]
// want: "{\"k\":\"x\",\"v\":2}"
package artifact

import "encoding/json"

func Encode(k string, v int) (string, error) {
	b, err := json.Marshal(map[string]any{"k": k, "v": v})
	return string(b), err
}
