package server

import (
	"context"
	"io"
	"log/slog"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// maxPendingLog bounds the bytes a LogWriter holds while a write is under way; past it, writers
// wait (the log slows the server down rather than lose lines).
const maxPendingLog = 1 << 20

// logWriteGap is the least time between the starts of two of a LogWriter's writes.
const logWriteGap = time.Millisecond

// LogWriter is the request log's writer: lines written while a write to the underlying writer is
// under way, or within logWriteGap of its start, are written together in the next one (group
// commit). An idle server's line is written at once; a loaded one writes at most one system call
// a gap with every line of it (a file's write blocks its thread: one per line or two had the
// runtime hand processors over and poll for them), and a request does not wait for the log's
// write. Lines are queued without a lock (every request adds one: a mutex there made convoys of
// the connections' requests whenever the kernel preempted its holder). Close writes what is
// pending.
type LogWriter struct {
	w       io.Writer
	head    atomic.Pointer[logLine] // the pending lines, newest first
	pending atomic.Int64            // their bytes
	adding  atomic.Int64            // lines being queued (Close waits for them)
	shut    atomic.Bool             // closed: lines are written at once
	mu      sync.Mutex
	cond    *sync.Cond // signalled (under mu) when pending bytes are taken, for writers over the bound, and at close
	wake    chan struct{}
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
	gap     time.Duration
	// after is time.After (tests stand in for the clock).
	after func(time.Duration) <-chan time.Time
}

// logLine is a queued line.
type logLine struct {
	next *logLine
	b    []byte
}

var logLines = sync.Pool{New: func() any { return &logLine{b: make([]byte, 0, 256)} }}

// NewLogWriter starts a LogWriter over w.
func NewLogWriter(w io.Writer) *LogWriter { return newLogWriter(w, logWriteGap, time.After) }

func newLogWriter(w io.Writer, gap time.Duration, after func(time.Duration) <-chan time.Time) *LogWriter {
	l := &LogWriter{w: w, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}), gap: gap, after: after}
	l.cond = sync.NewCond(&l.mu)
	go l.run()
	return l
}

// Write queues p (a whole log line) for the next write; after Close it writes p at once.
func (l *LogWriter) Write(p []byte) (int, error) {
	ln := logLines.Get().(*logLine)
	ln.b = append(ln.b[:0], p...)
	l.push(ln)
	return len(p), nil
}

// push queues ln (a push onto a lock-free stack; the writer takes the whole stack at once), once
// the pending bytes are under the bound; after Close it writes ln at once.
func (l *LogWriter) push(ln *logLine) {
	l.adding.Add(1)
	if l.shut.Load() {
		l.adding.Add(-1)
		l.w.Write(ln.b)
		putLine(ln)
		return
	}
	if l.pending.Load() >= maxPendingLog {
		l.mu.Lock()
		for l.pending.Load() >= maxPendingLog && !l.shut.Load() {
			l.cond.Wait()
		}
		l.mu.Unlock()
	}
	l.pending.Add(int64(len(ln.b)))
	for {
		old := l.head.Load()
		ln.next = old
		if l.head.CompareAndSwap(old, ln) {
			if old == nil { // the writer has taken every line before: wake it
				select {
				case l.wake <- struct{}{}:
				default: // a wake-up is already pending: it takes this line too
				}
			}
			break
		}
	}
	l.adding.Add(-1)
}

func putLine(ln *logLine) {
	if cap(ln.b) > 4<<10 {
		return // a long line's buffer is not kept
	}
	ln.next, ln.b = nil, ln.b[:0]
	logLines.Put(ln)
}

// take appends the pending lines to out, oldest first, and releases their bytes from the bound.
func (l *LogWriter) take(out []byte) []byte {
	var first *logLine
	for ln := l.head.Swap(nil); ln != nil; { // newest first: reversed
		next := ln.next
		ln.next, first = first, ln
		ln = next
	}
	n := len(out)
	for ln := first; ln != nil; {
		out = append(out, ln.b...)
		next := ln.next
		putLine(ln)
		ln = next
	}
	if len(out) > n {
		l.pending.Add(-int64(len(out) - n))
		l.mu.Lock()
		l.cond.Broadcast()
		l.mu.Unlock()
	}
	return out
}

func (l *LogWriter) run() {
	defer close(l.done)
	var out []byte
	for {
		select {
		case <-l.wake:
		case <-l.stop:
			l.mu.Lock()
			l.shut.Store(true)
			l.cond.Broadcast()
			l.mu.Unlock()
			for l.adding.Load() > 0 { // lines queued before the close was seen
				runtime.Gosched()
			}
			if out = l.take(out[:0]); len(out) > 0 {
				l.w.Write(out)
			}
			return
		}
		if out = l.take(out[:0]); len(out) == 0 {
			continue
		}
		start := time.Now()
		l.w.Write(out) // a log that cannot be written is not the request's failure (as with slog's own writer)
		if rest := l.gap - time.Since(start); rest > 0 {
			select { // the lines of the rest of the gap wait for the next write (Close ends the wait)
			case <-l.after(rest):
			case <-l.stop:
			}
		}
	}
}

// Close writes what is pending; later writes go straight to the underlying writer.
func (l *LogWriter) Close() error {
	l.once.Do(func() { close(l.stop) })
	<-l.done
	return nil
}

// Request appends the request log's line for one request: the line slog's JSON handler (with no
// options) writes for LogAttrs(ctx, LevelInfo, "request", method, path, status, duration), built
// without slog (its record, attribute values and handler state were ~10% of a loaded server's
// CPU). A method or path that needs escaping goes through slog itself, so the line is the same.
func (l *LogWriter) Request(t time.Time, method, path string, status int, d time.Duration) {
	if !plainJSON(method) || !plainJSON(path) || t.Year() < 0 || t.Year() >= 10000 {
		slog.New(slog.NewJSONHandler(l, nil)).LogAttrs(context.Background(), slog.LevelInfo, "request", requestAttrs(method, path, status, d)...)
		return
	}
	ln := logLines.Get().(*logLine)
	ln.b = appendRequestLine(ln.b[:0], t, method, path, status, d)
	l.push(ln)
}

func requestAttrs(method, path string, status int, d time.Duration) []slog.Attr {
	return []slog.Attr{slog.String("method", method), slog.String("path", path), slog.Int("status", status), slog.Duration("duration", d)}
}

// appendRequestLine appends the request's JSON line to b: method and path must be plainJSON, the
// year within 0-9999 (what slog's JSON handler writes as they stand).
func appendRequestLine(b []byte, t time.Time, method, path string, status int, d time.Duration) []byte {
	b = append(b, `{"time":"`...)
	b = t.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","level":"INFO","msg":"request","method":"`...)
	b = append(b, method...)
	b = append(b, `","path":"`...)
	b = append(b, path...)
	b = append(b, `","status":`...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, `,"duration":`...)
	b = strconv.AppendInt(b, int64(d), 10)
	return append(b, "}\n"...)
}

// plainJSON reports whether s is printable ASCII with no quote or backslash: a JSON string's
// content as it stands.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
