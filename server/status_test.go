package server

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/forge"
)

// Issue 23 item 9: the one table from an Outcome's type, class and rule to the HTTP status.
func TestCallStatus(t *testing.T) {
	for _, c := range []struct {
		typ, class, rule string
		retriable        bool
		status, retry    int
	}{
		{"", "", "", false, 200, 0}, // ok
		{"returned_error", "caller", "returned_answer", false, 200, 0},
		{"unknown_role", "caller", "args", false, 404, 0},
		{"unknown_method", "caller", "args", false, 404, 0},
		{"args", "caller", "args", false, 400, 0},
		{"args", "caller", "args_too_large", false, 413, 0},
		{"panic", "caller", "input_specific", false, 422, 0},
		{"panic", "caller", "input_repeated", false, 422, 0},
		{"refused", "caller", "args", false, 409, 0},
		{"closed", "caller", "closed", false, 503, 1},
		{"model_calls", "caller", "model_calls", false, 429, 1},
		{"panic", "intrinsic", "panic", false, 500, 0},
		{"gate", "intrinsic", "compile", false, 500, 0},
		{"host", "adaptive", "host_http_gone", false, 502, 0},
		{"capacity", "extrinsic", "capacity", true, 503, 1},
		{"provider", "extrinsic", "provider_rate_limited", true, 503, 5},
		{"host", "extrinsic", "host_http_429", true, 503, 5},
		{"provider", "extrinsic", "provider_auth", false, 502, 0},
		{"host", "extrinsic", "host_http_denied", false, 502, 0},
		{"deadline", "extrinsic", "deadline_caller", false, 504, 0},
		{"refused", "extrinsic", "quarantined", false, 503, 0},
		{"store", "extrinsic", "internal", false, 500, 0},
	} {
		o := &forge.Outcome{OK: c.class == ""}
		if c.class != "" {
			o.Err = &forge.Error{Type: c.typ, Class: c.class, Rule: c.rule, Retriable: c.retriable}
		}
		st, retry := callStatus(o)
		assert.Equal(t, c.status, st, "%+v", c)
		assert.Equal(t, c.retry, retry, "%+v", c)
	}
}

// Configured names and origins: a host of --allowed-hosts is served; an origin of
// --cors-origins gets the preflight and may call; another origin may not.
func TestAllowedHostsAndCORSOrigins(t *testing.T) {
	f := openForge(t, t.TempDir())
	_, ts := newTestServer(t, f, Options{AllowedHosts: []string{"forge.internal"}, CORSOrigins: []string{"https://app.example"}})
	resp, body := send(t, "GET", ts.URL+"/v1/roles", "", map[string]string{"Host": "forge.internal:7077"})
	assert.Equal(t, 200, resp.StatusCode, "%s", body)
	resp, _ = send(t, "GET", ts.URL+"/v1/roles", "", map[string]string{"Host": "other.internal"})
	assert.Equal(t, 403, resp.StatusCode)

	call := ts.URL + "/v1/call/text/upper"
	resp, _ = send(t, "OPTIONS", call, "", map[string]string{"Origin": "https://app.example", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"})
	assert.Equal(t, 204, resp.StatusCode)
	assert.Equal(t, "https://app.example", resp.Header.Get("Access-Control-Allow-Origin"))
	assert.Contains(t, resp.Header.Get("Access-Control-Allow-Headers"), "Content-Type")
	resp, body = send(t, "POST", call, `{"s":"a"}`, map[string]string{"Origin": "https://app.example", "Sec-Fetch-Site": "cross-site", "Content-Type": "application/json"})
	assert.Equal(t, 200, resp.StatusCode, "%s", body)
	assert.Equal(t, "https://app.example", resp.Header.Get("Access-Control-Allow-Origin"))
	resp, body = send(t, "POST", call, `{"s":"a"}`, map[string]string{"Origin": "https://evil.example", "Content-Type": "application/json"})
	assert.Equal(t, 403, resp.StatusCode, "%s", body)
	assert.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"))

	for _, o := range []Options{{CORSOrigins: []string{"*"}}, {CORSOrigins: []string{"app.example"}}, {AllowedHosts: []string{"http://x/y"}}} {
		err := o.Validate()
		require.Error(t, err, "%+v", o)
		assert.Regexp(t, "write|name each", err.Error(), "the error says how to write it")
	}
}

// serveOn runs s.Serve on a loopback listener until the test ends and returns its address.
func serveOn(t *testing.T, s *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done })
	return ln.Addr().String()
}

// Issue 22 item 8: a client that sends its body slowly is cut off at the body deadline (408),
// not held; a request whose body arrived in time runs past that deadline undisturbed.
func TestSlowBodyIsCutOff(t *testing.T) {
	f := openForge(t, t.TempDir())
	const deadline = 300 * time.Millisecond
	ran := make(chan error, 1)
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		select { // longer than the body deadline: its context must not end
		case <-time.After(3 * deadline):
			ran <- nil
		case <-r.Context().Done():
			ran <- r.Context().Err()
		}
		w.WriteHeader(200)
	})
	s := New(f, Options{Logger: quietLogger(), BodyTimeout: deadline, Extra: map[string]http.Handler{"/slow": slow}})
	addr := serveOn(t, s)

	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	_, err = io.WriteString(c, "POST /v1/call/text/upper HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"s\":")
	require.NoError(t, err)
	c.SetReadDeadline(time.Now().Add(hang))
	resp, err := io.ReadAll(c) // the server answers and closes; before, it waited for the body
	require.NoError(t, err, "the slow body was held")
	assert.True(t, strings.HasPrefix(string(resp), "HTTP/1.1 408"), "%s", resp)
	assert.Contains(t, string(resp), "--body-timeout")

	r, err := http.Post("http://"+addr+"/slow", "text/plain", strings.NewReader("quick body"))
	require.NoError(t, err)
	r.Body.Close()
	assert.Equal(t, 200, r.StatusCode)
	assert.NoError(t, <-ran, "the body deadline ended a request whose body had arrived")
}

// The connection limit: at most n connections are accepted at once; the next Accept waits until
// one closes, and closing the listener ends a waiting Accept.
func TestLimitListener(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ln := newLimitListener(inner, 2)
	for range 3 {
		c, err := net.Dial("tcp", inner.Addr().String())
		require.NoError(t, err)
		defer c.Close()
	}
	a, err := ln.Accept()
	require.NoError(t, err)
	b, err := ln.Accept()
	require.NoError(t, err)
	defer b.Close()
	got := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		got <- c
	}()
	assert.Len(t, ln.sem, 2, "two connections held")
	a.Close()
	a.Close() // twice: released once
	select {
	case c := <-got:
		require.NotNil(t, c, "the third connection is accepted once one closed")
		c.Close()
	case <-time.After(hang):
		t.Fatal("Accept still waits after a connection closed")
	}
	go func() {
		c, err := ln.Accept()
		if err == nil {
			c.Close()
		}
		got <- c
	}()
	ln.Close()
	select {
	case <-got:
	case <-time.After(hang):
		t.Fatal("closing the listener left Accept waiting")
	}
}

// The bound on bodies holds for the handlers mounted beside the API (MCP) too.
func TestExtraHandlersBodiesAreBounded(t *testing.T) {
	f := openForge(t, t.TempDir())
	read := make(chan error, 1)
	mcp := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		read <- err
	})
	_, ts := newTestServer(t, f, Options{MaxBody: 1024, Extra: map[string]http.Handler{"/mcp": mcp}})
	resp, err := http.Post(ts.URL+"/mcp", "application/json", strings.NewReader(`{"x":"`+strings.Repeat("a", 4096)+`"}`))
	require.NoError(t, err)
	resp.Body.Close()
	var mbe *http.MaxBytesError
	assert.ErrorAs(t, <-read, &mbe, "an MCP body over --max-body is cut off")
}
