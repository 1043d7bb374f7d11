// args: [2000]
// want: 2000
package artifact

import "unicode"

// Churn writes and deletes keys of unicode.Categories and unicode.Scripts in a loop: run from
// several programs at once this used to kill the host with "concurrent map writes".
func Churn(n int) int {
	for i := 0; i < n; i++ {
		k := string(rune('a' + i%26))
		unicode.Categories[k] = unicode.Lu
		unicode.Scripts[k] = unicode.Latin
		delete(unicode.Categories, k)
		delete(unicode.Scripts, k)
	}
	return n
}
