package sandbox

import (
	"errors"
	"fmt"
	"strings"
)

// Kind names what went wrong in a sandboxed call; the classifier maps it to a failure class.
type Kind string

// Error kinds. Every error Compile, Run and Test return wraps an *Error with one of them.
const (
	KindCompile  Kind = "compile"  // parse or type error, or a known interpreter gap (see Hint)
	KindPolicy   Kind = "policy"   // forbidden import, statement, directive or host call
	KindPanic    Kind = "panic"    // the code panicked (nil, index, conversion, divide, explicit)
	KindDeadline Kind = "deadline" // the call ran past Limits.Timeout (see HostCallInFlight)
	KindDepth    Kind = "depth"    // call depth passed Limits.MaxDepth (unbounded recursion)
	KindMemory   Kind = "memory"   // the memory cap was hit (isolation mode)
	KindOutput   Kind = "output"   // the result or logs passed Limits.OutputBytes
	KindArgs     Kind = "args"     // the caller's args do not fit the signature (see Param)
	KindHost     Kind = "host"     // a host call failed: network, DNS, TLS, HTTP status
	KindDecode   Kind = "decode"   // fetched upstream content could not be decoded
	KindResult   Kind = "result"   // the results could not be encoded as JSON
	KindReturned Kind = "returned" // the function returned a non-nil error of its own
	KindInternal Kind = "internal" // the sandbox itself failed (worker died for no known reason, ...)
	// KindCapacity: the call never got to run its code: no free instance (or worker) came before
	// the deadline, or waiting for one left the code less than its time limit. Never the code's
	// fault; retry later or raise the pool size.
	KindCapacity Kind = "capacity"
	// KindCallDepth: a host Call would have gone past Limits.MaxCallDepth (runaway delegation).
	KindCallDepth Kind = "call_depth"
	// KindNotReplayable: a replayed input's run (Input.Replay) asked host HTTP for a method
	// other than GET or HEAD; the request was not sent, and the run says nothing about the code.
	KindNotReplayable Kind = "not_replayable"
)

// Error is the typed error of every sandbox operation: it carries exactly what failure
// classification needs, so callers branch on fields rather than on message text.
type Error struct {
	Kind    Kind   `json:"kind"`
	Message string `json:"message"`
	// Hint says what to do instead (for a code generator or a human).
	Hint string `json:"hint,omitempty"`
	// Line is the 1-based source line the error points at, 0 if unknown.
	Line int `json:"line,omitempty"`
	// Param names the parameter whose argument did not fit (KindArgs).
	Param string `json:"param,omitempty"`
	// HostCallInFlight is set on a deadline that hit while a host call was running.
	HostCallInFlight bool `json:"host_call_in_flight,omitempty"`
	// HTTPStatus is the status of the failed HTTP host call (KindHost), 0 if none.
	HTTPStatus int `json:"http_status,omitempty"`
	// UpstreamRead is set when the code had read upstream (HTTP or Call) data before failing.
	UpstreamRead bool  `json:"upstream_read,omitempty"`
	Err          error `json:"-"`
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("sandbox: ")
	b.WriteString(string(e.Kind))
	if e.Line > 0 {
		fmt.Fprintf(&b, ": line %d", e.Line)
	}
	if e.Param != "" {
		fmt.Fprintf(&b, ": param %s", e.Param)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.Hint != "" {
		b.WriteString(" (hint: ")
		b.WriteString(e.Hint)
		b.WriteString(")")
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Is makes errors.Is(err, &Error{Kind: k}) match any *Error of kind k.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Message == "" && t.Kind == e.Kind
}

// Errorf builds an *Error of kind k.
func Errorf(k Kind, format string, args ...any) *Error {
	return &Error{Kind: k, Message: fmt.Sprintf(format, args...)}
}

// KindOf returns the Kind of the *Error in err's chain, or KindInternal if there is none.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindInternal
}

// AsError returns the *Error in err's chain, wrapping a foreign error as KindInternal.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Kind: KindInternal, Message: err.Error(), Err: err}
}
