// args: {"a": 2, "b": 40}
// isolation: process
// backends: yaegi
// want: 42
package artifact

func Add(a, b int) int { return a + b }
