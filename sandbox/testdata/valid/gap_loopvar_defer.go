// args: [3]
// want: "210"
package artifact

// A deferred function literal in a loop uses its iteration's i: yaegi v0.16.1 ran deferred
// literals with the variables' last values ("222"); the rewrite passes them as arguments.

import "strconv"

func Order(n int) (s string) {
	func() {
		for i := 0; i < n; i++ {
			defer func() { s += strconv.Itoa(i) }()
		}
	}()
	return s
}
