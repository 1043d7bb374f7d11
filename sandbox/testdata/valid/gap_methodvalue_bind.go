// args: []
// want: [1, 1, 7, "x!"]
package artifact

// Method values bind their receiver when taken: a value receiver is copied (get and (&b).get
// see 1), a pointer receiver binds &b (set writes b). yaegi v0.16.1 read the receiver at call time (get
// gave 2); the rewrite binds it.

import "strings"

type box struct{ v int }

func (b box) get() int                             { return b.v }
func (b *box) set(v int)                           { b.v = v }
func (b box) join(sep string, xs ...string) string { return strings.Join(xs, sep) + "!" }

func Bind() []any {
	b := box{1}
	get := b.get
	getp := (&b).get
	set := b.set
	b.v = 2
	v1 := get()
	v2 := getp()
	set(7)
	return []any{v1, v2, b.v, b.join(",", "x")}
}
