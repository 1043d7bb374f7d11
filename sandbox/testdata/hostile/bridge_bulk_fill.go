// args: []
// memory: 256MB
// timeout: 1s
// kind: deadline
package artifact

// Wipe clears 64 MiB per iteration (a bulk memory.fill in wasm): like a copy, it must be charged
// by its size so that the call stops at its deadline.
func Wipe() int {
	buf := make([]byte, 64<<20)
	n := 0
	for {
		clear(buf)
		n++
	}
}
