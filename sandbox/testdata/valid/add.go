// args: [1, 2]
// want: 3
package artifact

func Add(a, b int) int { return a + b }
