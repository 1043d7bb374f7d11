package symbols

import (
	"io"
	"text/scanner"
)

// text/scanner reports a scanning error to the process's os.Stderr when the Scanner's Error field
// is nil, which Init sets it to: guest code would write what it likes (the position's Filename is
// its own) to the host's standard error, a server's log stream, or to an isolation worker's,
// which the host reads to classify the worker's death. The rewrite (sandbox/yaegi/rewrite.go,
// guardStderr) routes Init's result and every assignment to the field through these helpers
// (keys of the text/scanner table, see gen/main.go), so the field is never nil: errors are
// counted (ErrorCount) and otherwise dropped, as the guest's standard error is under wasm (kept
// only for a crash report).

func discardScanError(*scanner.Scanner, string) {}

// scannerInit is what s.Init(r) becomes: forge__init(s.Init(r)).
func scannerInit(s *scanner.Scanner) *scanner.Scanner {
	if s != nil && s.Error == nil {
		s.Error = discardScanError
	}
	return s
}

// scannerInitFunc is what the method value s.Init becomes: forge__initFunc(s.Init).
func scannerInitFunc(f func(io.Reader) *scanner.Scanner) func(io.Reader) *scanner.Scanner {
	return func(r io.Reader) *scanner.Scanner { return scannerInit(f(r)) }
}

// scannerError is what the assigned value becomes in s.Error = f: forge__error(f).
func scannerError(f func(*scanner.Scanner, string)) func(*scanner.Scanner, string) {
	if f == nil {
		return discardScanError
	}
	return f
}
