// args: [10]
// want: [55, 89]
package artifact

func fib2(n int) (int, int) {
	if n == 0 {
		return 0, 1
	}
	a, b := fib2(n - 1)
	return b, a + b
}

func Fib2(n int) []int {
	a, b := fib2(n)
	return []int{a, b}
}
