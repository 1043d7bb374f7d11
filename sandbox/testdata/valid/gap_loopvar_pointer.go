// args: [[1, 2, 3]]
// want: 6
package artifact

func Sum(xs []int) int {
	var ps []*int
	for _, x := range xs {
		ps = append(ps, &x)
	}
	s := 0
	for _, p := range ps {
		s += *p
	}
	return s
}
