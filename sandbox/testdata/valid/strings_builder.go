// args: [3]
// want: "0,1,2"
package artifact

import (
	"strconv"
	"strings"
)

func Join(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(i))
	}
	return b.String()
}
