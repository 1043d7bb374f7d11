package mcp

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sessionCount is how many sessions s's SDK server holds.
func sessionCount(s *Server) int {
	n := 0
	for range s.srv.Sessions() {
		n++
	}
	return n
}

// TestRedteam5SessionsAreBounded: every initialize opened a session that lived until its client
// deleted it (no idle timeout), each ~22 KB and two goroutines, and each later initialize looked
// through them all: anyone who may reach /mcp (any local process, on a loopback server without
// client identities) grew the server's memory without bound. The sessions are bounded
// (Options.MaxSessions); past the bound the one used least recently ends (its client's next
// request gets the SDK's 404 and initializes again).
func TestRedteam5SessionsAreBounded(t *testing.T) {
	s := warmServer(t)
	s.o.MaxSessions = 3
	ts := httptest.NewServer(s.HTTPHandler())
	t.Cleanup(ts.Close)
	call := func(sid, id string) *http.Response {
		t.Helper()
		resp, _ := rawPost(t, ts.URL, strings.Replace(upperCall, "ID", id, 1), "Mcp-Session-Id", sid, "Mcp-Protocol-Version", "2025-06-18")
		return resp
	}
	a := rawSession(t, ts.URL)
	b := rawSession(t, ts.URL)
	c := rawSession(t, ts.URL)
	require.Equal(t, http.StatusOK, call(a, "1").StatusCode) // a is used: b is now the least recent
	d := rawSession(t, ts.URL)
	assert.LessOrEqual(t, sessionCount(s), 3, "sessions past the bound")
	assert.Equal(t, http.StatusNotFound, call(b, "2").StatusCode, "the least recently used session ended")
	for _, sid := range []string{a, c, d} {
		assert.Equal(t, http.StatusOK, call(sid, "3").StatusCode, "a session used since stays")
	}
	for range 20 {
		rawSession(t, ts.URL)
	}
	assert.LessOrEqual(t, sessionCount(s), 3)
}
