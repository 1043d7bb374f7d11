// args: [3]
// want: [0, 1, 2]
package artifact

// A pointer method value of a range variable binds that iteration's &b (yaegi v0.16.1 gave
// [2, 2, 2]: the receiver was read when the value was called).

type box struct{ v int }

func (b *box) get() int { return b.v }

func Values(n int) []int {
	var fs []func() int
	for _, b := range make([]box, n) {
		fs = append(fs, b.get)
	}
	bs := make([]box, n)
	for i := range bs {
		bs[i].v = i
	}
	fs = fs[:0]
	for _, b := range bs {
		fs = append(fs, b.get)
	}
	out := []int{}
	for _, f := range fs {
		out = append(out, f())
	}
	return out
}
