//go:build !linux

package wasm

// politely runs f (elsewhere the nice value is the whole process's, which must not change).
func politely(f func()) { f() }
