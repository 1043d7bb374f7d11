// args: []
// kind: compile
// stage: compile
// contains: nested more than
package artifact

func F() int {
	return (1)
}
