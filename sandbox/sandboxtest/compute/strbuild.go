package compute

import (
	"strconv"
	"strings"
)

// BuildString concatenates n formatted lines, then upper-cases and splits the result: string
// building and copying.
func BuildString(n int) int {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString("line ")
		b.WriteString(strconv.Itoa(i))
		b.WriteString(": value=")
		b.WriteString(strconv.FormatFloat(float64(i)/7, 'f', 3, 64))
		b.WriteByte('\n')
	}
	s := strings.ToUpper(b.String())
	return len(s) + len(strings.Split(s, "\n"))
}
