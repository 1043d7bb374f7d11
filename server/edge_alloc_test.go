package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// connWriter is a ResponseWriter as net/http's own: it takes a read deadline (so the body
// deadline applies, as under Serve) and keeps nothing between requests.
type connWriter struct {
	h      http.Header
	status int
}

func (w *connWriter) Header() http.Header             { return w.h }
func (w *connWriter) WriteHeader(code int)            { w.status = code }
func (w *connWriter) Write(p []byte) (int, error)     { return len(p), nil }
func (w *connWriter) SetReadDeadline(time.Time) error { return nil }

// body is a request body read again on each request.
type body struct{ strings.Reader }

func (*body) Close() error { return nil }

// What the edge allocates for a warm call on top of the call itself: the request's state
// (status, body deadline, limits) in one allocation, the body read at its announced length,
// the request line into the log's buffer. Measured against forge.CallWithin on the same args,
// so the sandbox's own allocations are not counted.
func TestCallEdgeAllocations(t *testing.T) {
	f := openForge(t, t.TempDir())
	lw := NewLogWriter(io.Discard)
	t.Cleanup(func() { lw.Close() })
	s := New(f, Options{Logger: quietLogger(), RequestLog: lw})
	const args = `{"s":"hello"}`
	b := &body{}
	r, err := http.NewRequest("POST", "http://127.0.0.1:7077/v1/call/text/upper", nil)
	require.NoError(t, err)
	r.Header.Set("Content-Type", "application/json")
	w := &connWriter{h: http.Header{}}
	serve := func() {
		b.Reset(args)
		r.Body, r.ContentLength = b, int64(len(args))
		clear(w.h)
		s.ServeHTTP(w, r)
	}
	serve() // compiles the method
	require.Equal(t, 200, w.status)
	// The log's lines come from a pool the log's writer refills after each write; under load
	// it holds a gap's worth of them. Here the pool is filled first and kept through the runs.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	for range 1000 {
		putLine(&logLine{b: make([]byte, 0, 256)})
	}
	ctx := context.Background()
	edge := testing.AllocsPerRun(200, serve)
	call := testing.AllocsPerRun(200, func() {
		f.CallWithin(ctx, DefaultCallTimeout, "text", "upper", json.RawMessage(args))
	})
	t.Logf("edge %v allocations, the call alone %v", edge, call)
	require.LessOrEqual(t, edge-call, 3.0, "allocations of the edge beyond the call's")
}

// callPath routes before the mux only what the mux would route to handleCall, with the same
// role and method; anything else (other methods, escapes, unclean paths the mux redirects) is
// left to the mux.
func TestCallPathAgreesWithTheMux(t *testing.T) {
	mux := http.NewServeMux()
	var got [2]string
	mux.HandleFunc("POST /v1/call/{role}/{method}", func(_ http.ResponseWriter, r *http.Request) {
		got = [2]string{r.PathValue("role"), r.PathValue("method")}
	})
	for _, c := range []struct {
		method, target string
		fast           bool
	}{
		{"POST", "/v1/call/text/upper", true},
		{"POST", "/v1/call/a.b/c-d_e", true},
		{"POST", "/v1/call/text/upper?x=1", true},
		{"GET", "/v1/call/text/upper", false},
		{"PUT", "/v1/call/text/upper", false},
		{"POST", "/v1/call/text/upper/", false},
		{"POST", "/v1/call/text", false},
		{"POST", "/v1/call/text/", false},
		{"POST", "/v1/call//upper", false},
		{"POST", "/v1/call/text/upper/more", false},
		{"POST", "/v1/call/../roles/x", false},
		{"POST", "/v1/call/./upper", false},
		{"POST", "/v1/call/text/..", false},
		{"POST", "/v1/call/te%2Fxt/upper", false},
		{"POST", "/v1/call/t%65xt/upper", false},
		{"POST", "/v1//call/text/upper", false},
		{"POST", "/v1/calls/text/upper", false},
	} {
		r := httptest.NewRequest(c.method, "http://127.0.0.1"+c.target, nil)
		role, method, ok := callPath(r.Method, r.URL)
		assert.Equal(t, c.fast, ok, c.target)
		if !ok {
			continue
		}
		got = [2]string{}
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, r)
		assert.Equal(t, [2]string{role, method}, got, "%s: the mux routes it elsewhere (status %d)", c.target, rec.Code)
	}
}

// A server whose Extra handlers could take a call's path leaves the routing to the mux.
func TestCallRouteOffForExtraUnderCall(t *testing.T) {
	f := openForge(t, t.TempDir())
	assert.True(t, New(f, Options{Extra: map[string]http.Handler{"/mcp": mcpStub}}).callRoute)
	assert.False(t, New(f, Options{Extra: map[string]http.Handler{"example.com/": mcpStub}}).callRoute)
	assert.False(t, New(f, Options{Extra: map[string]http.Handler{"/v1/call/": mcpStub}}).callRoute)
}
