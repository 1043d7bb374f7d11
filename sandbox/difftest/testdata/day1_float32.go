// args: {"a": 0.1}
// want: 0.1
package artifact

func Id(a float32) float32 { return a }
