// args: [0]
// kind: panic
package artifact

func Div(x int) int { return 10 / x }
