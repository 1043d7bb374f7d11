// args: []
// kind: output
package artifact

import "strings"

func Big() string { return strings.Repeat("x", 4<<20) }
