package server

import (
	"io"
	"sync"
)

// maxPendingLog bounds the bytes a LogWriter holds while a write is under way; past it, writers
// wait (the log slows the server down rather than lose lines).
const maxPendingLog = 1 << 20

// LogWriter is the request log's writer, a group commit: the writer that finds no write under way
// writes, and lines that arrive meanwhile are written together by it in its next write (their
// writers return at once). An idle server writes each line as before; a loaded one writes many
// lines per system call instead of one each, and its requests do not queue behind the log's
// lock for a write each. No goroutine of its own: Close waits for a write under way.
type LogWriter struct {
	w       io.Writer
	mu      sync.Mutex
	cond    *sync.Cond // broadcast when a write ends
	buf     []byte     // pending, for the writer under way
	spare   []byte
	writing bool
}

// NewLogWriter returns a LogWriter over w.
func NewLogWriter(w io.Writer) *LogWriter {
	l := &LogWriter{w: w}
	l.cond = sync.NewCond(&l.mu)
	return l
}

// Write writes p (a whole log line), or leaves it to the write under way.
func (l *LogWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	for l.writing && len(l.buf) >= maxPendingLog {
		l.cond.Wait()
	}
	l.buf = append(l.buf, p...)
	if l.writing {
		l.mu.Unlock()
		return len(p), nil
	}
	l.writing = true
	var err error
	for len(l.buf) > 0 {
		out := l.buf
		l.buf = l.spare[:0]
		l.mu.Unlock()
		_, werr := l.w.Write(out)
		if err == nil {
			err = werr
		}
		l.mu.Lock()
		l.spare = out[:0]
		l.cond.Broadcast()
	}
	l.writing = false
	l.cond.Broadcast()
	l.mu.Unlock()
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close waits for a write under way (every line written before it is then written).
func (l *LogWriter) Close() error {
	l.mu.Lock()
	for l.writing {
		l.cond.Wait()
	}
	l.mu.Unlock()
	return nil
}
