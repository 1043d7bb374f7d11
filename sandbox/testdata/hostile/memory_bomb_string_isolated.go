// args: []
// isolation: process
// memory: 128MB
// timeout: 10s
// kind: memory
// backends: yaegi
package artifact

import "strings"

func Grow() int {
	s := "xxxxxxxx"
	for {
		s = s + strings.Repeat(s, 1)
	}
}
