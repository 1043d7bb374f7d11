// args: []
// kind: policy
// contains: build constraint

// +build ignore

package artifact

// F would be left out of the wasm build by the constraint above.
func F() int { return 1 }
