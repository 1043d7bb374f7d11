// args: [7, [1, 2.5, 1e2, "a", null, [4, -0.5]], {"n": 9223372036854775807, "big": 9223372036854775808, "f": 2.0}, [{"name": "x", "value": 3}, {"name": "y", "value": 3.5}]]
// want: ["int", "[int float64 float64 string <nil> [int float64]]", "{big:float64 f:float64 n:int}", "x:int", "y:float64"]
package artifact

import (
	"fmt"
	"sort"
	"strings"
)

type Item struct {
	Name  string `json:"name"`
	Value any    `json:"value"`
}

// Types reports the dynamic types JSON numbers get inside interfaces at every depth: int for an
// integer literal that fits in int, float64 otherwise (as Go types the same untyped constants).
func Types(x any, xs []any, m map[string]any, items []Item) []string {
	out := []string{describe(x), describe(xs), describe(m)}
	for _, it := range items {
		out = append(out, it.Name+":"+describe(it.Value))
	}
	return out
}

func describe(v any) string {
	switch t := v.(type) {
	case []any:
		parts := make([]string, len(t))
		for i, e := range t {
			parts[i] = describe(e)
		}
		return "[" + strings.Join(parts, " ") + "]"
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + ":" + describe(t[k])
		}
		return "{" + strings.Join(parts, " ") + "}"
	case nil:
		return "<nil>"
	}
	return fmt.Sprintf("%T", v)
}
