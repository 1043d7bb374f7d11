package symbols

import (
	"errors"
	"fmt"
)

// callState is the fmt.State a guest Format method is handed (see gen/main.go, the fmt table's
// _fmt_Formatter wrapper): the native one is fmt's pooled printer, which the process reuses for
// every Sprintf once Format returns. Guest code could keep it and write to it on a later call,
// prefixing whatever the host (or another program) formats next with the same printer; so the
// state it gets forwards to the printer only until its Format call returns.
type callState struct{ s fmt.State }

var errStaleState = errors.New("fmt.State used after its Format call returned: write to it only during Format")

func (c *callState) Write(b []byte) (int, error) {
	if c.s == nil {
		return 0, errStaleState
	}
	return c.s.Write(append([]byte(nil), b...)) // the caller's slice never becomes the printer's
}

func (c *callState) Width() (int, bool) {
	if c.s == nil {
		return 0, false
	}
	return c.s.Width()
}

func (c *callState) Precision() (int, bool) {
	if c.s == nil {
		return 0, false
	}
	return c.s.Precision()
}

func (c *callState) Flag(f int) bool { return c.s != nil && c.s.Flag(f) }

// formatCall calls a guest Format method with a callState that goes stale when it returns.
func formatCall(format func(fmt.State, rune), f fmt.State, verb rune) {
	s := &callState{s: f}
	defer func() { s.s = nil }()
	format(s, verb)
}
