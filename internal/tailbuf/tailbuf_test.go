package tailbuf

import (
	"strings"
	"testing"
)

func TestBuffer(t *testing.T) {
	for _, c := range []struct {
		name       string
		head, tail int
		writes     []string
		want       string
	}{
		{"fits", 4, 4, []string{"abc", "de"}, "abcde"},
		{"exactly both", 2, 3, []string{"ab", "cde"}, "abcde"},
		{"one big write", 2, 3, []string{"abcdefgh"}, "ab\n…\nfgh"},
		{"many small writes", 2, 3, []string{"a", "b", "c", "d", "e", "f", "g", "h"}, "ab\n…\nfgh"},
		{"the end is the report", 3, 5, []string{strings.Repeat("x", 100), "boom!"}, "xxx\n…\nboom!"},
		{"a write as big as the tail after others", 1, 3, []string{"abc", "def"}, "a\n…\ndef"},
		{"tail only", 0, 3, []string{"abcdef"}, "…def"},
		{"tail only, fits", 0, 3, []string{"ab"}, "ab"},
		{"head only", 3, 0, []string{"abcdef"}, "abc\n…\n"},
		{"nothing", 3, 3, nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := New(c.head, c.tail)
			total := 0
			for _, w := range c.writes {
				n, err := b.Write([]byte(w))
				if err != nil || n != len(w) {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
				total += n
			}
			if got := b.String(); got != c.want {
				t.Errorf("String() = %q, want %q", got, c.want)
			}
			b.Reset()
			if got := b.String(); got != "" {
				t.Errorf("after Reset: %q", got)
			}
		})
	}
}

// TestBufferKeepsTheLastBytes writes far more than the buffer keeps, in writes of every size: the
// start and the end are exact.
func TestBufferKeepsTheLastBytes(t *testing.T) {
	var all strings.Builder
	for i := 0; all.Len() < 50_000; i++ {
		all.WriteString(strings.Repeat(string(rune('a'+i%26)), i%97))
	}
	s := all.String()
	for _, step := range []int{1, 7, 100, 4096, 9000} {
		b := New(1000, 2000)
		for i := 0; i < len(s); i += step {
			b.Write([]byte(s[i:min(i+step, len(s))]))
		}
		want := s[:1000] + "\n" + Marker + "\n" + s[len(s)-2000:]
		if got := b.String(); got != want {
			t.Errorf("writes of %d bytes: got %d bytes, not the first 1000 and the last 2000", step, len(got))
		}
	}
}
