package guestgen

import (
	"strings"

	"github.com/artifactforge/forge/sandbox"
)

// DepthHint is the hint of every call-depth error.
const DepthHint = "unbounded or too deep recursion: make it iterative or bound it"

// CrashError classifies a guest whose Go runtime stopped with stderr as its report: a stack over
// its cap (KindDepth), memory over its cap (KindMemory), every goroutine blocked (KindDeadline);
// nil for any other report (the backend decides: a panic, mostly).
func CrashError(stderr string, err error) *sandbox.Error {
	switch {
	case strings.Contains(stderr, "stack exceeds") || strings.Contains(stderr, "stack overflow"):
		return &sandbox.Error{Kind: sandbox.KindDepth, Message: "call depth exceeded: " + firstLine(stderr, "stack exceeds"), Hint: DepthHint, Err: err}
	case strings.Contains(stderr, "out of memory"):
		return &sandbox.Error{Kind: sandbox.KindMemory, Message: "memory cap exceeded: " + firstLine(stderr, "out of memory"), Err: err,
			Hint: "use less memory: stream or bound the data the code builds"}
	case strings.Contains(stderr, "cannot allocate memory"):
		// A native worker's mmap refused under RLIMIT_DATA (ENOMEM), reported by the runtime.
		return &sandbox.Error{Kind: sandbox.KindMemory, Message: "memory cap exceeded: " + firstLine(stderr, "cannot allocate memory"), Err: err,
			Hint: "use less memory: stream or bound the data the code builds"}
	case strings.Contains(stderr, "all goroutines are asleep"):
		return &sandbox.Error{Kind: sandbox.KindDeadline, Message: "the code blocks forever (all goroutines are asleep - deadlock)", Err: err}
	}
	return nil
}

// CrashReport is stderr without the guest runtime's goroutine dump after a fatal error (e.g.
// "panic while printing panic value"): the dump describes the guest's runtime, not the code.
func CrashReport(stderr string) string {
	s := strings.TrimSpace(stderr)
	if i := strings.Index(s, "\n\ngoroutine "); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	return s
}

func firstLine(s, containing string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, containing) {
			return strings.TrimSpace(l)
		}
	}
	return strings.TrimSpace(s)
}
