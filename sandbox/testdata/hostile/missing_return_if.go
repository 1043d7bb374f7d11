// args: [3]
// kind: compile
// stage: compile
// contains: missing return
package artifact

// Sign falls off the end when n == 0: Go says "missing return"; yaegi would return 0.
func Sign(n int) int {
	if n > 0 {
		return 1
	} else if n < 0 {
		return -1
	}
}
