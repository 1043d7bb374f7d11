// args: []
// kind: policy
// contains: //go:build

//go:build ignore

package artifact

// F would be left out of the wasm build by the constraint above.
func F() int { return 1 }
