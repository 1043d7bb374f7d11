// args: []
// isolation: process
// timeout: 5s
// kind: depth|memory
// stage: compile
// backends: yaegi
package artifact

import "sort"

var xs = []int{3, 1, 2}

func less(i, j int) bool {
	sort.Slice(xs, less)
	return xs[i] < xs[j]
}

// The recursion goes through sort.Slice (native), past the interpreter's depth guard.
func init() { sort.Slice(xs, less) }

func F() int { return xs[0] }
