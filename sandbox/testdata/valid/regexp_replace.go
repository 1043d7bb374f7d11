// args: ["a1b22c333"]
// want: "a#b#c#"
package artifact

import "regexp"

func Mask(s string) string { return regexp.MustCompile(`[0-9]+`).ReplaceAllString(s, "#") }
