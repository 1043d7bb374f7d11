//go:build !unix

package wasm

func lockStage(string) (release func()) { return func() {} }

// staleStage: without flock a leftover staging directory cannot be told from a live one; it is
// left alone.
func staleStage(string) bool { return false }
