package guestgen

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/artifactforge/forge/sandbox"
)

// ErrBadReport marks a result the guest should never have produced (an error report over
// MaxErrorReport, one that is not JSON): the instance or worker that sent it is discarded.
var ErrBadReport = errors.New("bad report from the guest")

// Result reads the dispatcher's tagged result res: 'v' + a JSON value (over outputBytes:
// KindOutput; not valid JSON: KindResult), 'e' + a JSON sandbox.Error. ok is false for any other
// tag, which the backend decides on.
func Result(res []byte, outputBytes int) (value json.RawMessage, err error, ok bool) {
	if len(res) == 0 {
		return nil, nil, false
	}
	switch res[0] {
	case 'v':
		if len(res)-1 > outputBytes {
			return nil, &sandbox.Error{Kind: sandbox.KindOutput, Message: fmt.Sprintf("result is %d bytes, over the %d-byte cap", len(res)-1, outputBytes)}, true
		}
		if !validResult(res[1:]) {
			return nil, &sandbox.Error{Kind: sandbox.KindResult, Message: "the result is not valid JSON",
				Hint: "return plain values, or a json.Marshaler that returns valid JSON"}, true
		}
		return append(json.RawMessage(nil), res[1:]...), nil, true
	case 'e':
		// The guest caps its messages (forge__cap); a report far larger is not read at all.
		if len(res) > MaxErrorReport {
			return nil, &sandbox.Error{Kind: sandbox.KindInternal, Err: ErrBadReport,
				Message: fmt.Sprintf("error report of %d bytes from the guest, over the %d-byte bound", len(res), MaxErrorReport)}, true
		}
		var e sandbox.Error
		if err := json.Unmarshal(res[1:], &e); err != nil {
			return nil, &sandbox.Error{Kind: sandbox.KindInternal, Err: ErrBadReport, Message: "bad error from guest: " + err.Error()}, true
		}
		if e.Kind == sandbox.KindReturned {
			e.Err = errors.New(e.Message)
		}
		return nil, &e, true
	}
	return nil, nil, false
}

// validResult reports whether b is valid JSON, deciding the shapes most results have (an integer,
// a boolean, null, a string without escapes) without encoding/json's scanner, which was 2.7% of
// a warm call's CPU.
func validResult(b []byte) bool {
	switch {
	case len(b) == 0:
		return false
	case b[0] == '-' || b[0] >= '0' && b[0] <= '9':
		d := b
		if d[0] == '-' {
			d = d[1:]
		}
		plain := len(d) > 0 && (d[0] != '0' || len(d) == 1)
		for _, c := range d {
			plain = plain && c >= '0' && c <= '9'
		}
		if plain {
			return true
		}
	case b[0] == '"' && len(b) >= 2 && b[len(b)-1] == '"':
		plain := true
		for _, c := range b[1 : len(b)-1] {
			plain = plain && c >= 0x20 && c != '"' && c != '\\' && c < 0x7f
		}
		if plain {
			return true
		}
	case string(b) == "true" || string(b) == "false" || string(b) == "null":
		return true
	}
	return json.Valid(b)
}

// MaxErrorReport bounds the JSON error report the host reads from the guest: a message capped at
// sandbox.MaxErrorBytes, JSON-escaped (up to 6 bytes per byte), plus its other fields.
const MaxErrorReport = 6*sandbox.MaxErrorBytes + 4<<10

// StackFor is the guest's Go stack cap for a call: room for Limits.MaxDepth frames of 512 bytes,
// at least 1 MiB and at most an eighth of the memory cap, so that unbounded recursion ends as a
// depth error quickly (Go copies and rescans the whole stack at each doubling) and never as OOM.
func StackFor(lim sandbox.Limits) uint64 {
	lim = lim.WithDefaults()
	s := uint64(lim.MaxDepth) * 512
	if s < 1<<20 {
		s = 1 << 20
	}
	if m := uint64(lim.MemoryBytes) / 8; s > m {
		s = m
	}
	return s
}

// StartCall begins a Run as every guest backend does: it refuses a program that is not this
// backend's (ours false) or is closed, fills in the limits' defaults and puts the args in the
// signature's order.
func StartCall(backend string, prog sandbox.Program, ours, closed bool, in *sandbox.Input) ([]json.RawMessage, error) {
	if !ours {
		return nil, sandbox.Errorf(sandbox.KindInternal, "%s: program of type %T is not from this %s sandbox", backend, prog, backend)
	}
	if closed {
		return nil, sandbox.Errorf(sandbox.KindInternal, "%s: run of a closed program (a forge bug: programs are closed only when no call uses them)", backend)
	}
	in.Limits = in.Limits.WithDefaults()
	return sandbox.OrderArgs(prog.Signature(), in.Args)
}
