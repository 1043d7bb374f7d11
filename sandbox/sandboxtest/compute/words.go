package compute

import (
	"strconv"
	"strings"
)

// WordCount builds a text of n words from a 1,000-word vocabulary, splits it and counts each
// word in a map: strings and map work. It returns the distinct words times the top count.
func WordCount(n int) int {
	var b strings.Builder
	x := uint32(1)
	for i := 0; i < n; i++ {
		x = x*1664525 + 1013904223
		b.WriteString("word")
		b.WriteString(strconv.Itoa(int(x>>8) % 1000))
		b.WriteByte(' ')
	}
	counts := map[string]int{}
	for _, w := range strings.Fields(b.String()) {
		counts[w]++
	}
	top := 0
	for _, c := range counts {
		top = max(top, c)
	}
	return len(counts) * top
}
