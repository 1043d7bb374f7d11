// Package tailbuf keeps, of a process's or a guest's error output, the first and the last few
// KiB: a fatal error's reason is printed first and a runtime's report (a stack overflow, out of
// memory, a panic after lines of logging) last, and either can be what classifies a failure. The
// one such buffer of the wasm sandbox, the yaegi worker pool and the command provider.
package tailbuf

import (
	"sync"
)

// Marker stands for the bytes between the kept start and the kept end.
const Marker = "…"

// Buffer is an io.Writer that keeps the first head and the last tail bytes written to it, and
// accepts (and counts) every write. It is safe for concurrent use.
type Buffer struct {
	head, tail int
	mu         sync.Mutex
	first      []byte
	rest       []byte // the bytes after first, of which the last tail are kept
	dropped    bool   // bytes between first and the kept rest were dropped
}

// New returns a Buffer that keeps the first head and the last tail bytes.
func New(head, tail int) *Buffer { return &Buffer{head: max(head, 0), tail: max(tail, 0)} }

// Write keeps what of p falls in the first head bytes or, so far, in the last tail.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	if room := b.head - len(b.first); room > 0 {
		k := min(room, len(p))
		b.first = append(b.first, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 {
		return n, nil
	}
	if len(p) >= b.tail {
		b.dropped = b.dropped || len(b.rest) > 0 || len(p) > b.tail
		b.rest = append(b.rest[:0], p[len(p)-b.tail:]...)
		return n, nil
	}
	b.rest = append(b.rest, p...)
	// Trim once the kept end is twice its size: each byte is copied at most twice.
	if over := len(b.rest) - b.tail; over > b.tail {
		b.rest = append(b.rest[:0], b.rest[over:]...)
		b.dropped = true
	}
	return n, nil
}

// String is the kept start, then Marker on a line of its own if bytes were dropped, then the
// kept end (Marker then the end alone for a Buffer that keeps no start).
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	rest := b.rest
	dropped := b.dropped
	if over := len(rest) - b.tail; over > 0 {
		rest, dropped = rest[over:], true
	}
	switch {
	case !dropped:
		return string(b.first) + string(rest)
	case len(b.first) == 0:
		return Marker + string(rest)
	}
	return string(b.first) + "\n" + Marker + "\n" + string(rest)
}

// Reset empties the buffer for reuse.
func (b *Buffer) Reset() {
	b.mu.Lock()
	b.first, b.rest, b.dropped = b.first[:0], b.rest[:0], false
	b.mu.Unlock()
}
