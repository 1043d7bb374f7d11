// args: ["ab"]
// want: "<ab>"
package artifact

import "strings"

type tagger struct {
	strings.Builder
}

func Tag(s string) string {
	var t tagger
	t.WriteString("<")
	t.WriteString(s)
	t.WriteByte('>')
	return t.String()
}
