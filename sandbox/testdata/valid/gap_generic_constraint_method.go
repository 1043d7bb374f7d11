// args: [[2, 1]]
// want: "1,2"
package artifact

import (
	"fmt"
	"sort"
	"strings"
)

type num int

func (n num) String() string { return fmt.Sprint(int(n)) }

func joinAll[T fmt.Stringer](xs []T) string {
	parts := make([]string, 0, len(xs))
	for _, x := range xs {
		parts = append(parts, x.String())
	}
	return strings.Join(parts, ",")
}

func Join(xs []int) string {
	sort.Ints(xs)
	ns := make([]num, len(xs))
	for i, x := range xs {
		ns[i] = num(x)
	}
	return joinAll(ns)
}
