// args: {"xs": []}
// want: false
package artifact

func IsNil(xs []int) bool { return xs == nil }
