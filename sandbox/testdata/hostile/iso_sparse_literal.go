// args: [3]
// memory: 64MB
// timeout: 5s
// kind: memory|compile
// backends: yaegi
// stage: compile
package artifact

// One keyed element makes a 1 GiB array literal: a few bytes of source, a gigabyte at load.
// (yaegi v0.16.1's compiler panics on it; the panic must not take the compiling process down.)
var table = [...]byte{1<<30 - 1: 1}

func At(i int) int { return int(table[i]) }
