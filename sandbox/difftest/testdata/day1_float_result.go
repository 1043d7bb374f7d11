// args: {"a": 0.1, "b": 0.2}
// want: 0.30000000000000004
package artifact

func Add(a, b float64) float64 { return a + b }
