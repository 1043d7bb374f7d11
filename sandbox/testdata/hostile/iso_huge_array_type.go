// args: [3]
// isolation: process
// memory: 64MB
// timeout: 5s
// kind: memory|compile|panic
// backends: yaegi
package artifact

// A package-level array of 1 TiB: zero-valued, so no initializer runs, but the interpreter
// allocates the variable when it loads the file. Isolated, that is the worker's problem.
var a [1 << 40]byte

func At(i int) int { return int(a[i]) }
