// args: {}
// want: null
package artifact

func Empty() []int { return nil }
