// args: {"n": 100}
// want: -56
package artifact

func Double(n int8) int8 { return n * 2 }
