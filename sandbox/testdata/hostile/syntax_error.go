// args: []
// kind: compile
package artifact

func Broken( int {
	return 1
}
