// args: {"n": 9007199254740993}
// want: 9007199254740994
package artifact

func Inc(n int64) int64 { return n + 1 }
