// args: [[1, 2, 3], 2]
// kind: compile
// stage: compile
// contains: missing return
package artifact

// Index has a break in its endless loop, so the loop is not a terminating statement.
func Index(xs []int, x int) int {
	i := 0
	for {
		if i == len(xs) {
			break
		}
		if xs[i] == x {
			return i
		}
		i++
	}
}
