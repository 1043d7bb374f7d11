// args: []
// want: [1, 2, 2, 3, 2, 4]
package artifact

// As gap_iota_multi inside a function, with typed single-name specs after the multi-name ones
// (yaegi v0.16.1 counted their iota per name too).

type kind int

func Sizes() []int {
	const (
		a, b = iota + 1, iota + 2
		c, d
		e kind = iota
		f
	)
	return []int{a, b, c, d, int(e), int(f) + 1}
}
