// args: ["aaa"]
// timeout: 5s
// kind: depth
package artifact

import "regexp"

var re = regexp.MustCompile("a")

func again(s string) string { return re.ReplaceAllStringFunc(s, again) }

// Replace recurses through Regexp.ReplaceAllStringFunc.
func Replace(s string) string { return re.ReplaceAllStringFunc(s, again) }
