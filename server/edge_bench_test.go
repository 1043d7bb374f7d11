package server

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// floorHandler is what any JSON-over-HTTP service does for a call: decode the args, compute,
// encode an answer (internal/benchhttp serves the same as the floor of `make bench-http`).
func floorHandler(w http.ResponseWriter, r *http.Request) {
	var args struct {
		S string `json:"s"`
	}
	if err := json.NewDecoder(r.Body).Decode(&args); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(struct {
		OK    bool   `json:"ok"`
		Value string `json:"value"`
	}{true, strings.ToUpper(args.S)})
}

// BenchmarkEdgeHandler is the request path without the network: the floor handler and a warm
// /v1/call through the server's handler (guards, request log as `forge serve` writes it, metrics,
// the Outcome's encoding), in the same run. The difference is the edge's own cost per call.
func BenchmarkEdgeHandler(b *testing.B) {
	f := openForge(b, b.TempDir())
	lw := NewLogWriter(io.Discard)
	b.Cleanup(func() { lw.Close() })
	s := New(f, Options{Logger: slog.New(slog.NewJSONHandler(lw, nil))})
	warm := httptest.NewRecorder()
	s.ServeHTTP(warm, newCallRequest())
	require.Equal(b, 200, warm.Code, warm.Body.String())
	for _, c := range []struct {
		name string
		h    http.Handler
	}{{"floor", http.HandlerFunc(floorHandler)}, {"call", s}} {
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
}

func newCallRequest() *http.Request {
	r := httptest.NewRequest("POST", "http://127.0.0.1:7077/v1/call/text/upper", strings.NewReader(`{"s":"hello"}`))
	r.Header.Set("Content-Type", "application/json")
	return r
}
