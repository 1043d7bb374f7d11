// args: [["b", "a"]]
// want: "a,b"
package artifact

import (
	"sort"
	"strings"
)

func Join(xs []string) string {
	sorted := append([]string(nil), xs...)
	sort.Strings(sorted)
	strings := strings.Join(sorted, ",")
	return strings
}
