// args: []
// want: 6
package artifact

func Sum() int {
	m := map[string]int{"a": 1, "b": 2, "c": 3}
	var fs []func() int
	for _, v := range m {
		fs = append(fs, func() int { return v })
	}
	s := 0
	for _, f := range fs {
		s += f()
	}
	return s
}
