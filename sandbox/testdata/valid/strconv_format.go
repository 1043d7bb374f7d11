// args: [255]
// want: "ff"
package artifact

import "strconv"

func Hex(n int) string { return strconv.FormatInt(int64(n), 16) }
