// args: []
// want: [1, 9]
package artifact

type grid struct{ cells [2]int }

func Copy() []int {
	g := grid{[2]int{1, 2}}
	h := g
	h.cells[0] = 9
	return []int{g.cells[0], h.cells[0]}
}
