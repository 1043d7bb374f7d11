// args: []
// want: []
package artifact

import (
	"sort"
	"strings"
	"unicode"
)

// Read looks for what another program stashed in unicode.Categories: nothing may be there.
func Read() []string {
	found := []string{}
	for k := range unicode.Categories {
		if strings.HasPrefix(k, "stash:") {
			found = append(found, k)
		}
	}
	sort.Strings(found)
	return found
}
