// args: []
// memory: 256MB
// timeout: 1s
// kind: deadline
package artifact

// Churn copies 64 MiB per iteration. Each copy is one bulk memory instruction in wasm: metering
// that charged it one unit let a 1 s deadline run for 14.8 s. It must stop at its deadline.
func Churn() int {
	src := make([]byte, 64<<20)
	dst := make([]byte, 64<<20)
	n := 0
	for {
		n += copy(dst, src)
	}
}
