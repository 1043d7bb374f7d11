// args: []
// kind: compile
// contains: refused_assign_a_scanner_error_handler
// backends: yaegi
package artifact

import (
	"strings"
	"text/scanner"
)

// Scan clears a Scanner's Error field as a range clause's target, which is not an assignment the
// rewrite routes: in-process yaegi refuses it (under wasm the guest's standard error is its own).
func Scan() int {
	var s scanner.Scanner
	s.Init(strings.NewReader(`"open`))
	for _, s.Error = range []func(*scanner.Scanner, string){nil} {
	}
	s.Filename = "FORGE-INJECTED"
	s.Scan()
	return s.ErrorCount
}
