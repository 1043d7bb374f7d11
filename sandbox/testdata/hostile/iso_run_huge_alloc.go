// args: [40]
// isolation: process
// memory: 64MB
// timeout: 5s
// kind: memory
// backends: yaegi
package artifact

// One allocation of 1 TiB: the worker's address-space limit refuses it and the runtime dies of
// "out of memory", which is the code's doing.
func Alloc(shift int) int {
	b := make([]byte, 1<<shift)
	b[len(b)-1] = 1
	return len(b)
}
