// Package providertest helps test providers and their callers: Server is a scripted HTTP
// server for testing providers against their APIs' real wire format (each request gets the
// next canned reply and is recorded), and Func turns a function into a Provider.
package providertest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/provider"
)

// Reply is one canned HTTP response.
type Reply struct {
	Status int               // 200 when 0
	Header map[string]string // Content-Type defaults to application/json
	Body   string
	Hang   bool // never answer; wait until the client gives up
}

// Request is what the server received.
type Request struct {
	Method, Path string
	Header       http.Header
	Body         []byte
}

// JSON decodes the request body into a generic value for assertions.
func (r Request) JSON(t testing.TB) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(r.Body, &v); err != nil {
		t.Fatalf("request body is not JSON: %v\n%s", err, r.Body)
	}
	return v
}

// Server answers with Replies in order; a request beyond them fails the test.
type Server struct {
	*httptest.Server
	t       testing.TB
	mu      sync.Mutex
	replies []Reply
	reqs    []Request
}

// New starts a server closed at the end of the test.
func New(t testing.TB, replies ...Reply) *Server {
	s := &Server{t: t, replies: replies}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	n := len(s.reqs)
	s.reqs = append(s.reqs, Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
	var rep Reply
	ok := n < len(s.replies)
	if ok {
		rep = s.replies[n]
	}
	s.mu.Unlock()
	if !ok {
		s.t.Errorf("providertest: unexpected request %d to %s", n+1, r.URL.Path)
		http.Error(w, "unexpected request", http.StatusTeapot)
		return
	}
	if rep.Hang {
		<-r.Context().Done()
		return
	}
	if _, set := rep.Header["Content-Type"]; !set {
		w.Header().Set("Content-Type", "application/json")
	}
	for k, v := range rep.Header {
		w.Header().Set(k, v)
	}
	status := rep.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, rep.Body)
}

// Requests returns what the server received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Func is a Provider made of a function, for tests of code that uses a provider: count calls,
// script answers, simulate failures.
type Func func(ctx context.Context, req provider.Request) (provider.Answer, error)

// Generate calls f.
func (f Func) Generate(ctx context.Context, req provider.Request) (provider.Answer, error) {
	return f(ctx, req)
}

// Name reports "func".
func (Func) Name() string { return "func" }

// WantError is what a provider's error must carry; see ExpectError.
type WantError struct {
	Kind       provider.ErrorKind
	Status     int           // the HTTP status, 0 when none
	RetryAfter time.Duration // what the server asked for, 0 when nothing
	Contains   []string      // substrings of the message
	Is         error         // a cause errors.Is must find, if any
}

// ExpectError checks that err is a *provider.Error from the named provider with want's fields.
func ExpectError(t testing.TB, err error, providerName string, want WantError) {
	t.Helper()
	var pe *provider.Error
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, want.Kind, pe.Kind, err.Error())
	assert.Equal(t, providerName, pe.Provider)
	assert.Equal(t, want.Status, pe.Status)
	assert.Equal(t, want.RetryAfter, pe.RetryAfter)
	for _, c := range want.Contains {
		assert.Contains(t, err.Error(), c)
	}
	if want.Is != nil {
		assert.ErrorIs(t, err, want.Is)
	}
}

// Fixture is a recorded HTTP exchange half kept in a testdata file: a request as a client sent
// it (Method, Path, Header, Body) or a response as an API returned it (Status, Header, Body).
// Source says where the recording comes from. A JSON string Body is sent as is (an HTML page);
// any other JSON value is sent as its JSON.
type Fixture struct {
	Source string            `json:"source"`
	Method string            `json:"method,omitempty"`
	Path   string            `json:"path,omitempty"`
	Status int               `json:"status,omitempty"`
	Header map[string]string `json:"header"`
	Body   json.RawMessage   `json:"body"`
}

// LoadFixture reads a Fixture from a JSON file.
func LoadFixture(t testing.TB, path string) Fixture {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var f Fixture
	require.NoError(t, json.Unmarshal(data, &f), path)
	require.NotEmpty(t, f.Source, "%s: say where the recording comes from", path)
	return f
}

// Reply turns a recorded response into a canned one, its JSON body compact as APIs send it.
func (f Fixture) Reply() Reply {
	body := string(f.Body)
	var s string
	var compact bytes.Buffer
	if json.Unmarshal(f.Body, &s) == nil {
		body = s
	} else if json.Compact(&compact, f.Body) == nil {
		body = compact.String()
	}
	return Reply{Status: f.Status, Header: f.Header, Body: body}
}

// JSON decodes the recorded body into a generic value, for comparing with Request.JSON.
func (f Fixture) JSON(t testing.TB) map[string]any {
	t.Helper()
	var v map[string]any
	require.NoError(t, json.Unmarshal(f.Body, &v))
	return v
}
