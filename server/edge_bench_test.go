package server

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/internal/edgefloor"
)

// BenchmarkEdgeHandler is the request path without the network: the floor handler and a warm
// /v1/call through the server's handler (guards, request log as `forge serve` writes it, metrics,
// the Outcome's encoding), in the same run. The difference is the edge's own cost per call.
func BenchmarkEdgeHandler(b *testing.B) {
	f := openForge(b, b.TempDir())
	lw := NewLogWriter(io.Discard)
	b.Cleanup(func() { lw.Close() })
	// call is forge serve's set-up (the request line straight into the LogWriter), call-slog
	// the request line through slog's JSON handler (a Server with a Logger only).
	s := New(f, Options{Logger: slog.New(slog.NewJSONHandler(lw, nil)), RequestLog: lw})
	viaSlog := New(f, Options{Logger: slog.New(slog.NewJSONHandler(lw, nil))})
	warm := httptest.NewRecorder()
	s.ServeHTTP(warm, newCallRequest())
	require.Equal(b, 200, warm.Code, warm.Body.String())
	for _, c := range []struct {
		name string
		h    http.Handler
	}{{"floor", http.HandlerFunc(edgefloor.Handler)}, {"call", s}, {"call-slog", viaSlog}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				c.h.ServeHTTP(w, newCallRequest())
				if w.Code != 200 {
					b.Fatal(w.Code, w.Body.String())
				}
			}
		})
	}
	// call-64 is call from 64 goroutines at once, as under hey -c 64: what the request path's
	// shared state (the request log, the call's counters) costs when it is contended; run it
	// with -mutexprofile to see the waits.
	b.Run("call-64", func(b *testing.B) {
		b.ReportAllocs()
		b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				w := httptest.NewRecorder()
				s.ServeHTTP(w, newCallRequest())
				if w.Code != 200 {
					b.Error(w.Code, w.Body.String())
					return
				}
			}
		})
	})
}

func newCallRequest() *http.Request {
	r := httptest.NewRequest("POST", "http://127.0.0.1:7077/v1/call/text/upper", strings.NewReader(`{"s":"hello"}`))
	r.Header.Set("Content-Type", "application/json")
	return r
}
