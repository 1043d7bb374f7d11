package sandboxtest

// ComputeCase is one compute-heavy program for comparing backends with native Go.
type ComputeCase struct {
	Name, Code, Args, Want string
}

// FibCode is recursive fib: call heavy, the worst case for interpreters and Go's wasm code.
const FibCode = `package artifact

func fib(n int) int {
	if n < 2 {
		return n
	}
	return fib(n-1) + fib(n-2)
}

func Fib(n int) int { return fib(n) }
`

// SieveCode counts primes with a sieve: loop and memory heavy.
const SieveCode = `package artifact

func Primes(n int) int {
	composite := make([]bool, n+1)
	count := 0
	for i := 2; i <= n; i++ {
		if composite[i] {
			continue
		}
		count++
		for j := i * i; j <= n; j += i {
			composite[j] = true
		}
	}
	return count
}
`

// ComputeCases are the compute pair every backend benchmarks beside native Go (NativeFib,
// NativePrimes).
var ComputeCases = []ComputeCase{
	{"fib27", FibCode, "[27]", "196418"},
	{"sieve2M", SieveCode, "[2000000]", "148933"},
}

// NativeFib is FibCode compiled by Go.
func NativeFib(n int) int {
	if n < 2 {
		return n
	}
	return NativeFib(n-1) + NativeFib(n-2)
}

// NativePrimes is SieveCode compiled by Go.
func NativePrimes(n int) int {
	composite := make([]bool, n+1)
	count := 0
	for i := 2; i <= n; i++ {
		if composite[i] {
			continue
		}
		count++
		for j := i * i; j <= n; j += i {
			composite[j] = true
		}
	}
	return count
}
