// args: [[1, 2]]
// kind: panic
package artifact

func Third(xs []int) int { return xs[2] }
