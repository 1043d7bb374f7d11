// args: []
// want: [1, 9]
package artifact

func Copy() []int {
	a := [2]int{1, 2}
	b := a
	b[1] = 9
	return []int{a[0], b[1]}
}
