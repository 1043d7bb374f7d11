// args: {"s": "héllo 世界 🎉\u0000<>&\u2028"}
// want: "\u2028&><\u0000🎉 界世 olléh"
package artifact

func Reverse(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}
