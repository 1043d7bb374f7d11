// args: {"s": "a\ud800b"}
// want: 3
package artifact

import "unicode/utf8"

func Count(s string) int { return utf8.RuneCountInString(s) }
