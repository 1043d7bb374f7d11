// args: []
// want: "A"
package artifact

import "unicode"

// Skew rewrites unicode.CaseRanges, the slice the host's unicode.ToUpper reads: only this
// interpreter's copy changes, so ToUpper (native, host tables) still maps a to A.
func Skew() string {
	for i := range unicode.CaseRanges {
		unicode.CaseRanges[i].Delta[unicode.UpperCase] = 0
	}
	return string(unicode.ToUpper('a'))
}
