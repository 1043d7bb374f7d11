// args: [1, 2, 3]
// kind: args
package artifact

func Add(a, b int) int { return a + b }
