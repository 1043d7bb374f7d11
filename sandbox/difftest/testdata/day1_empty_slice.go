// args: {}
// want: []
package artifact

func Empty() []int { return []int{} }
