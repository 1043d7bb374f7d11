// args: {"s": "hello"}
// want: "aGVsbG8="
package artifact

func Bytes(s string) []byte { return []byte(s) }
