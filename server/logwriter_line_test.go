package server

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The request line written without slog is byte for byte the line slog's JSON handler writes,
// and a method or path that needs escaping is left to slog.
func TestRequestLineIsSlogs(t *testing.T) {
	loc := time.FixedZone("X", 5*3600+30*60)
	for _, c := range []struct {
		t            time.Time
		method, path string
		status       int
		d            time.Duration
		plain        bool
	}{
		{time.Date(2026, 11, 29, 2, 3, 4, 567890123, time.UTC), "POST", "/v1/call/text/upper", 200, 41234 * time.Nanosecond, true},
		{time.Date(2026, 1, 2, 3, 4, 5, 0, loc), "GET", "/v1/roles", 404, 0, true},
		{time.Date(2026, 1, 2, 3, 4, 5, 100, time.UTC), "GET", "/a<b>&c?'", 500, time.Hour, true},
		{time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), "GET", `/a"b\c`, 200, 1, false},
		{time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), "GET", "/caf\u00e9\n", 200, 1, false},
		{time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), "G\x00T", "/", 200, 1, false},
	} {
		var want bytes.Buffer
		r := slog.NewRecord(c.t, slog.LevelInfo, "request", 0)
		r.AddAttrs(requestAttrs(c.method, c.path, c.status, c.d)...)
		require.NoError(t, slog.NewJSONHandler(&want, nil).Handle(context.Background(), r))
		assert.Equal(t, c.plain, plainJSON(c.method) && plainJSON(c.path), c.path)
		if c.plain {
			assert.Equal(t, want.String(), string(appendRequestLine(nil, c.t, c.method, c.path, c.status, c.d)))
		}
	}
}

// A server with a RequestLog writes each request's line there, escaping included (through slog).
func TestServerRequestLog(t *testing.T) {
	var out bytes.Buffer
	lw := NewLogWriter(&out)
	s := New(openForge(t, t.TempDir()), Options{Logger: quietLogger(), RequestLog: lw})
	w := httptest.NewRecorder()
	s.ServeHTTP(w, newCallRequest())
	require.Equal(t, 200, w.Code, w.Body.String())
	w = httptest.NewRecorder()
	s.ServeHTTP(w, httptest.NewRequest("GET", "http://127.0.0.1:7077/v1/roles/caf%C3%A9%22", nil))
	require.NoError(t, lw.Close())
	lines := bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n"))
	require.Len(t, lines, 2, out.String())
	for i, want := range []struct {
		path   string
		status int
	}{{"/v1/call/text/upper", 200}, {"/v1/roles/café\"", w.Code}} {
		var l struct {
			Level, Msg, Method, Path string
			Status                   int
			Duration                 int64
		}
		require.NoError(t, json.Unmarshal(lines[i], &l), string(lines[i]))
		assert.Equal(t, "INFO", l.Level)
		assert.Equal(t, "request", l.Msg)
		assert.Equal(t, want.path, l.Path)
		assert.Equal(t, want.status, l.Status)
		assert.Positive(t, l.Duration)
	}
}
