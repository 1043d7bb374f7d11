// want: [3, 6, [2, 3, 4]]
package artifact

func Once() []any {
	calls := 0
	n := func() int { calls++; return 3 }
	s := 0
	for i := range n() {
		s += i
	}
	var seen []int
	for i := range 3 {
		i += 2
		seen = append(seen, i)
	}
	return []any{s, calls * 6, seen}
}
