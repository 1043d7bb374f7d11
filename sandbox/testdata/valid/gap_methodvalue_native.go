// args: ["abc xyz"]
// want: ["bcd yza", ["abc", "xyz"], [3, 2, 1]]
package artifact

import (
	"sort"
	"strings"
	"unicode"
)

type rot struct{ by rune }

func (r rot) shift(c rune) rune {
	if c < 'a' || c > 'z' {
		return c
	}
	return 'a' + (c-'a'+r.by)%26
}

type byDesc struct{ xs []int }

func (b *byDesc) less(i, j int) bool { return b.xs[i] > b.xs[j] }

func Native(s string) []any {
	r := rot{1}
	b := &byDesc{[]int{1, 3, 2}}
	sort.Slice(b.xs, b.less)
	return []any{strings.Map(r.shift, s), strings.FieldsFunc(s, unicode.IsSpace), b.xs}
}
