// args: []
// isolation: process
// backends: yaegi
// timeout: 500ms
// memory: 256MB
// kind: deadline|memory
package artifact

import "math/big"

// Pow computes 3^(2^31) in native code: one call into math/big that outlives the deadline. An
// in-process interpreter returns at the deadline but the native call keeps its goroutine and a
// CPU busy until it finishes (no guest frame to stop); only an isolated worker (killed) or wasm
// (fuel) stops it.
func Pow() int {
	x := new(big.Int).Exp(big.NewInt(3), big.NewInt(1<<31), nil)
	return x.BitLen()
}
