// args: ["ab"]
// want: "ab|ab|9"
package artifact

// Method expressions called on the spot, of a package's pointer type and of the file's own value
// type: rewritten to method calls ((&b).String()), which yaegi v0.16.1 runs (it panicked
// "reflect: Method index out of range").

import (
	"strconv"
	"strings"
)

type vec struct{ x int }

func (v vec) scale(k int) vec { return vec{v.x * k} }

func Echo(s string) string {
	var b strings.Builder
	(*strings.Builder).WriteString(&b, s)
	return (*strings.Builder).String(&b) + "|" + (*strings.Builder).String(&b) + "|" + strconv.Itoa(vec.scale(vec{3}, 3).x)
}
