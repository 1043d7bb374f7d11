// args: []
// kind: compile
package artifact

func Wrong() int {
	var s string = 1
	return s
}
