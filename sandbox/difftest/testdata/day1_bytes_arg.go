// args: {"b": "aGVsbG8="}
// want: 5
package artifact

func Len(b []byte) int { return len(b) }
