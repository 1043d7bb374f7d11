// args: [0]
// timeout: 5s
// kind: depth
package artifact

func Deep(n int) int {
	var f func(int) int
	f = func(k int) int { return f(k+1) + 1 }
	return f(n)
}
