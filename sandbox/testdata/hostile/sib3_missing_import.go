// args: []
// kind: compile
// stage: compile
// contains: undefined: io
// (a package used without its import, and not one the sandbox imports by itself: every backend
// says so, as the Go compiler does, instead of an interpreter panic that told the model to write
// the code another way)
package artifact

import (
	"strings"
	"text/scanner"
)

type initer interface {
	Init(src io.Reader) *scanner.Scanner
}

// Scan needs io, which it does not import.
func Scan() int {
	var s scanner.Scanner
	var i initer = &s
	i.Init(strings.NewReader("x"))
	return 1
}
