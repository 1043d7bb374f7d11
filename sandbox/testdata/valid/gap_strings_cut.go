// args: ["k=v"]
// want: ["k", "v"]
package artifact

import "strings"

func Split(s string) []string {
	k, v, _ := strings.Cut(s, "=")
	return []string{k, v}
}
