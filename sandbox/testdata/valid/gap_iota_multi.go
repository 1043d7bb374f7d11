// args: []
// want: [1, 2, 2, 3]
package artifact

// A constant group with a spec of several names: iota is the spec's index. yaegi v0.16.1
// counted it per name and reported the implicit repetition as a definition loop; the rewrite
// writes the values out.

const (
	a, b = iota + 1, iota + 2
	c, d
)

func Sizes() []int { return []int{a, b, c, d} }
