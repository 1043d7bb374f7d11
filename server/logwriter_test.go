package server

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gatedWriter records each Write; the first one waits for the gate.
type gatedWriter struct {
	mu      sync.Mutex
	writes  []string
	gate    chan struct{}
	entered chan struct{}
}

func (g *gatedWriter) Write(p []byte) (int, error) {
	g.mu.Lock()
	first := len(g.writes) == 0
	g.writes = append(g.writes, string(p))
	g.mu.Unlock()
	if first {
		close(g.entered)
		<-g.gate
	}
	return len(p), nil
}

// Lines written while the underlying write is under way go out together in the next write, in
// order, and Close writes every pending line.
func TestLogWriterGroupsLinesWrittenDuringAWrite(t *testing.T) {
	g := &gatedWriter{gate: make(chan struct{}), entered: make(chan struct{})}
	l := NewLogWriter(g)
	l.Write([]byte("a\n"))
	<-g.entered // "a" is being written: the next lines wait for it, together
	for _, s := range []string{"b\n", "c\n", "d\n"} {
		n, err := l.Write([]byte(s))
		require.NoError(t, err)
		require.Equal(t, len(s), n)
	}
	close(g.gate)
	require.NoError(t, l.Close())
	assert.Equal(t, []string{"a\n", "b\nc\nd\n"}, g.writes)
	l.Write([]byte("e\n")) // after Close: at once
	assert.Equal(t, "e\n", g.writes[len(g.writes)-1])
	require.NoError(t, l.Close(), "a second Close")
}

// Under load the writer writes at most once a gap: lines that come after a write has ended,
// within the gap from its start, wait and go out together in the next write; Close does not
// wait for the gap's end.
func TestLogWriterWritesOnceAGap(t *testing.T) {
	g := &gatedWriter{gate: make(chan struct{}), entered: make(chan struct{})}
	close(g.gate)
	waiting, release := make(chan time.Duration, 1), make(chan time.Time)
	l := newLogWriter(g, logWriteGap, func(d time.Duration) <-chan time.Time {
		select {
		case waiting <- d:
		default:
		}
		return release
	})
	wait := func() time.Duration {
		select {
		case d := <-waiting:
			return d
		case <-time.After(time.Minute):
			t.Fatal("the writer did not wait for the rest of the gap after a write")
			return 0
		}
	}
	l.Write([]byte("a\n")) // idle: written at once
	d := wait()            // "a" written: the writer waits out the rest of the gap
	assert.Greater(t, d, time.Duration(0))
	assert.LessOrEqual(t, d, logWriteGap)
	for _, s := range []string{"b\n", "c\n", "d\n"} {
		l.Write([]byte(s))
	}
	g.mu.Lock()
	assert.Equal(t, []string{"a\n"}, g.writes, "lines within the gap wait")
	g.mu.Unlock()
	close(release)
	wait() // "b" to "d" written, together
	l.Write([]byte("e\n"))
	require.NoError(t, l.Close())
	assert.Equal(t, []string{"a\n", "b\nc\nd\n", "e\n"}, g.writes)
}

// Past maxPendingLog pending bytes a line waits for the writer to take them: the log slows the
// server down rather than lose lines.
func TestLogWriterBoundsWhatIsPending(t *testing.T) {
	g := &gatedWriter{gate: make(chan struct{}), entered: make(chan struct{})}
	l := NewLogWriter(g)
	l.Write([]byte("a\n"))
	<-g.entered // "a" is being written, and waits for the gate
	big := append(bytes.Repeat([]byte("x"), maxPendingLog), '\n')
	l.Write(big) // at the bound
	wrote := make(chan struct{})
	go func() { l.Write([]byte("b\n")); close(wrote) }()
	runtime.Gosched()
	select {
	case <-wrote:
		t.Fatal("a line past the bound was queued while the bound's bytes were pending")
	default:
	}
	close(g.gate)
	<-wrote
	require.NoError(t, l.Close())
	assert.Equal(t, "a\n"+string(big)+"b\n", strings.Join(g.writes, ""))
}

// Concurrent writers lose no line and split none.
func TestLogWriterKeepsEveryLine(t *testing.T) {
	var mu sync.Mutex
	var out bytes.Buffer
	l := NewLogWriter(writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return out.Write(p) }))
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				l.Write([]byte("line of a request\n"))
			}
		}()
	}
	wg.Wait()
	require.NoError(t, l.Close())
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.Len(t, lines, 4000)
	for _, s := range lines {
		require.Equal(t, "line of a request", s)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// BenchmarkRequestLog is the request log line of `forge serve` written by 64 concurrent
// requests to a file: straight (slog's lock held for a write system call each) against through
// a LogWriter (the lock held for an append), and forge serve's LogWriter.Request (no slog), in
// the same run.
func BenchmarkRequestLog(b *testing.B) {
	for _, c := range []struct {
		name string
		wrap func(io.Writer) (io.Writer, func())
	}{
		{"direct", func(w io.Writer) (io.Writer, func()) { return w, func() {} }},
		{"logwriter", func(w io.Writer) (io.Writer, func()) { l := NewLogWriter(w); return l, func() { l.Close() } }},
	} {
		b.Run(c.name, func(b *testing.B) {
			f, err := os.Create(filepath.Join(b.TempDir(), "serve.log"))
			require.NoError(b, err)
			defer f.Close()
			w, done := c.wrap(f)
			log := slog.New(slog.NewJSONHandler(w, nil))
			b.SetParallelism(32)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					log.LogAttrs(context.Background(), slog.LevelInfo, "request", slog.String("method", "POST"),
						slog.String("path", "/v1/call/text/upper"), slog.Int("status", 200), slog.Duration("duration", 41*time.Microsecond))
				}
			})
			b.StopTimer()
			done()
		})
	}
	b.Run("request", func(b *testing.B) { // forge serve's: LogWriter.Request, no slog
		f, err := os.Create(filepath.Join(b.TempDir(), "serve.log"))
		require.NoError(b, err)
		defer f.Close()
		l := NewLogWriter(f)
		b.SetParallelism(32)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				l.Request(time.Now(), "POST", "/v1/call/text/upper", 200, 41*time.Microsecond)
			}
		})
		b.StopTimer()
		l.Close()
	})
}
