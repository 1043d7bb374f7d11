package server

import (
	"bytes"
	"strings"
	"sync"
	"testing"

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
	go l.Write([]byte("a\n"))
	<-g.entered // "a" is being written: the next lines wait for it, together, and return at once
	for _, s := range []string{"b\n", "c\n", "d\n"} {
		n, err := l.Write([]byte(s))
		require.NoError(t, err)
		require.Equal(t, len(s), n)
	}
	close(g.gate)
	require.NoError(t, l.Close())
	assert.Equal(t, []string{"a\n", "b\nc\nd\n"}, g.writes)
	l.Write([]byte("e\n")) // idle: at once
	assert.Equal(t, "e\n", g.writes[len(g.writes)-1])
	require.NoError(t, l.Close(), "a second Close")
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
