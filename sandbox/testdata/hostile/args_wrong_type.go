// args: ["ten"]
// kind: args
// contains: param n
package artifact

func Twice(n int) int { return 2 * n }
