// args: []
// want: [55, "hé1l3l4o5", 7, [[1, 2], [3]], 2, -1, -3, 12, "3.14"]
package artifact

import (
	"fmt"
	"strconv"
)

type counts map[string]int

func (c counts) add(k string) { c[k]++ }

func Misc() []any {
	var fib func(int) int
	fib = func(n int) int {
		if n < 2 {
			return n
		}
		return fib(n-1) + fib(n-2)
	}
	s := ""
	for i, r := range "héllo" {
		s += string(r) + strconv.Itoa(i)
	}
	s = s[:1] + s[2:]
	found := 0
outer:
	for i := 0; i < 5; i++ {
		for j := 0; j < 5; j++ {
			if i*j == 12 {
				found = i + j
				break outer
			}
		}
	}
	groups := map[int][]int{}
	for _, v := range []int{1, 2, 3} {
		groups[v/3] = append(groups[v/3], v)
	}
	c := counts{}
	c.add("a")
	c.add("a")
	return []any{fib(10), s, found, [][]int{groups[0], groups[1]}, c["a"], -7 % 3 / 1 * 1 % 2, -7 / 2, 0xF &^ 0x3, fmt.Sprintf("%.2f", 3.14159)}
}
