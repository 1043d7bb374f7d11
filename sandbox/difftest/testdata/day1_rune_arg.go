// args: {"r": 233}
// want: "é"
package artifact

func S(r rune) string { return string(r) }
