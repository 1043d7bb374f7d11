// args: {"a": 1, "b": 2, "c": 3}
// kind: args
// contains: param c
package artifact

func Add(a, b int) int { return a + b }
