// args: {"name": "Ada", "times": 2}
// want: "Ada Ada"
package artifact

import "strings"

func Repeat(name string, times int) string {
	return strings.TrimSpace(strings.Repeat(name+" ", times))
}
