// args: [[1, 2]]
// want: [1, 2, 3]
package artifact

type list []int

func (l *list) push(v int) { *l = append(*l, v) }

func Push(xs []int) []int {
	l := list(xs)
	l.push(3)
	return l
}
