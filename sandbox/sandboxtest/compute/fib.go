package compute

func fib(n int) int {
	if n < 2 {
		return n
	}
	return fib(n-1) + fib(n-2)
}

// Fib is recursive fib: call heavy, the worst case for interpreters and Go's wasm code.
func Fib(n int) int { return fib(n) }
