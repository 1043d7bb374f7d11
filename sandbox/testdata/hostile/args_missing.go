// args: {"a": 1}
// kind: args
// contains: param b
package artifact

func Add(a, b int) int { return a + b }
