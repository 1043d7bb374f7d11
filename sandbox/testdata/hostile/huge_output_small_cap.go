// args: []
// output: 1024
// kind: output
package artifact

func Big() []int {
	out := make([]int, 10000)
	return out
}
