// args: {"xs": null}
// want: true
package artifact

func IsNil(xs []int) bool { return xs == nil }
