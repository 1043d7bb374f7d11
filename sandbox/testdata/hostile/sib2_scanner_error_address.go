// args: []
// kind: compile
// contains: refused_assign_a_scanner_error_handler
// backends: yaegi
package artifact

import (
	"strings"
	"text/scanner"
)

func set[T any](p *T, v T) { *p = v }

// Scan clears a Scanner's Error field through its address, where no rewrite sees the write: an
// unterminated string would then be reported to the host's standard error with the guest's text
// as the file name. In-process yaegi refuses the address of the field (under wasm the guest's
// standard error is its own).
func Scan() int {
	var s scanner.Scanner
	s.Init(strings.NewReader(`"open`))
	set(&s.Error, nil)
	s.Filename = "FORGE-INJECTED"
	s.Scan()
	return s.ErrorCount
}
