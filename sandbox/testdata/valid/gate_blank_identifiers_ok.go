// args: [1, 41]
// want: 42
package artifact

import _ "strings"

var _ = 1

type pair struct {
	_ [0]func()
	a int
}

func _() {}

func (pair) _() {}

// Add uses blank names everywhere both backends compile them (a package-level type _ is refused
// by the gate: the interpreter cannot compile it).
func Add(_ int, b int) int {
	_, c := 0, b
	return pair{a: 1}.a + c
}
