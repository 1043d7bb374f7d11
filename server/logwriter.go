package server

import (
	"io"
	"sync"
)

// maxPendingLog bounds the bytes a LogWriter holds while a write is under way; past it, writers
// wait (the log slows the server down rather than lose lines).
const maxPendingLog = 1 << 20

// LogWriter is the request log's writer: lines written while a write to the underlying writer is
// under way are written together in the next one (group commit). An idle server's line is
// written at once; a loaded one writes many lines per system call instead of one each, and a
// request does not wait for the log's write. Close writes what is pending.
type LogWriter struct {
	w    io.Writer
	mu   sync.Mutex
	cond *sync.Cond // signalled when the pending bytes are taken (for writers over the bound) and at close
	buf  []byte     // pending
	wake chan struct{}
	stop chan struct{}
	done chan struct{}
	once sync.Once
	shut bool
}

// NewLogWriter starts a LogWriter over w.
func NewLogWriter(w io.Writer) *LogWriter {
	l := &LogWriter{w: w, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	l.cond = sync.NewCond(&l.mu)
	go l.run()
	return l
}

// Write queues p (a whole log line) for the next write; after Close it writes p at once.
func (l *LogWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	for len(l.buf) >= maxPendingLog && !l.shut {
		l.cond.Wait()
	}
	if l.shut {
		l.mu.Unlock()
		return l.w.Write(p)
	}
	l.buf = append(l.buf, p...)
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default: // a wake-up is already pending: it takes these bytes too
	}
	return len(p), nil
}

func (l *LogWriter) run() {
	defer close(l.done)
	var out []byte
	for {
		select {
		case <-l.wake:
		case <-l.stop:
			l.mu.Lock()
			out, l.buf = l.buf, nil
			l.shut = true
			l.cond.Broadcast()
			l.mu.Unlock()
			if len(out) > 0 {
				l.w.Write(out)
			}
			return
		}
		l.mu.Lock()
		out, l.buf = l.buf, out[:0]
		l.cond.Broadcast()
		l.mu.Unlock()
		if len(out) > 0 {
			l.w.Write(out) // a log that cannot be written is not the request's failure (as with slog's own writer)
		}
	}
}

// Close writes what is pending; later writes go straight to the underlying writer.
func (l *LogWriter) Close() error {
	l.once.Do(func() { close(l.stop) })
	<-l.done
	return nil
}
