// args: [0]
// timeout: 5s
// kind: depth
package artifact

func isEven(n int) bool {
	if n == -1 {
		return true
	}
	return isOdd(n + 1)
}

func isOdd(n int) bool { return isEven(n + 1) }

func Even(n int) bool { return isEven(n) }
