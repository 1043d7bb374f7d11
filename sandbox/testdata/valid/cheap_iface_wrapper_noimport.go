// args: ["a\nb\nc"]
// want: 3
package artifact

import (
	"bufio"
	"strings"
)

// reader is a guest type with a Read method, handed to a native function that takes an
// io.Reader although the file does not import io: the yaegi backend needs io's interface
// wrapper all the same (its interpreter gets the tables of the interfaces its tables mention).
type reader struct{ s *strings.Reader }

func (r reader) Read(p []byte) (int, error) { return r.s.Read(p) }

func Lines(s string) int {
	sc := bufio.NewScanner(reader{strings.NewReader(s)})
	n := 0
	for sc.Scan() {
		n++
	}
	return n
}
