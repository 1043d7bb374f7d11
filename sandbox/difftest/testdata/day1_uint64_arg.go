// args: {"n": 18446744073709551614}
// want: 18446744073709551615
package artifact

func Next(n uint64) uint64 { return n + 1 }
