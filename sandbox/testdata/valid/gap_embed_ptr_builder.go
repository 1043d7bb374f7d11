// args: ["ab"]
// want: "[ab]"
package artifact

import "strings"

type wrapped struct {
	*strings.Builder
}

func Wrap(s string) string {
	w := wrapped{&strings.Builder{}}
	w.WriteString("[" + s + "]")
	return w.String()
}
