// args: []
// timeout: 300ms
// kind: deadline
package artifact

func step(n int) int { return n + 1 }

func Spin() int {
	n := 0
	for n >= 0 {
		n = step(n) % 1000
	}
	return n
}
