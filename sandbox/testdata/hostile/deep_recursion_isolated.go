// args: [0]
// isolation: process
// backends: yaegi
// timeout: 5s
// kind: depth
package artifact

func Deep(n int) int { return Deep(n+1) + 1 }
