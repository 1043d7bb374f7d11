// args: []
// kind: compile
// stage: compile
// contains: declared and not used: x
// (the Go compiler, and so the wasm backend, refuses a local variable that is never used; the
// interpreter ran it: both backends now give the same verdict)
package artifact

// F declares x and never uses it.
func F() int {
	x := 3
	return 1
}
