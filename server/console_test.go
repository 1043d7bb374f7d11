package server

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/registry"
)

// The console's endpoints: one page of the artifact table, an artifact's activity, the store's
// quarantine with restore and dismiss behind the admin token (issue 28).
func TestConsoleEndpoints(t *testing.T) {
	store := t.TempDir()
	f := openForge(t, store)
	_, ts := newTestServer(t, f, Options{AdminToken: "s3cret"})
	require.True(t, callOutcome(t, ts.URL, "text", "upper", `{"s":"a"}`).OK)
	callStatusOutcome(t, 400, ts.URL, "text", "upper", `{"s":5}`)
	f.Flush() // the counters reach the store's files

	var p forge.TablePage
	require.Equal(t, 200, get(t, ts.URL+"/v1/artifact-table?sort=calls&desc=1", &p))
	require.Len(t, p.Rows, 1)
	assert.Equal(t, 1, p.Total)
	r := p.Rows[0]
	assert.Equal(t, "text.upper", r.Role+"."+r.Method)
	assert.Equal(t, "candidate", r.Lifecycle)
	assert.Equal(t, int64(2), r.Calls)
	assert.Equal(t, "caller", r.LastFailureClass)
	assert.NotEmpty(t, r.LastFailureReason, "a page's rows carry their last failure's reason")
	assert.Equal(t, map[string]int{"candidate": 1}, p.Lifecycles)

	for _, q := range []string{"sort=colour", "offset=-1", "limit=many"} {
		resp, body := do(t, "GET", ts.URL+"/v1/artifact-table?"+q, "", "")
		assert.Equal(t, 400, resp.StatusCode, "%s: %s", q, body)
		assert.Equal(t, "args", errBody(t, body))
	}

	var a forge.Activity
	require.Equal(t, 200, get(t, ts.URL+"/v1/artifacts/text/upper/activity?since=1h&buckets=6", &a))
	require.Len(t, a.Timeline, 6)
	var calls, fails int64
	for _, tp := range a.Timeline {
		calls, fails = calls+tp.Calls, fails+tp.Failures
	}
	assert.Equal(t, int64(2), calls)
	assert.Equal(t, int64(1), fails)
	require.Len(t, a.Failures, 1)
	assert.Equal(t, "caller", a.Failures[0].Class)
	resp, body := do(t, "GET", ts.URL+"/v1/artifacts/text/nope/activity", "", "")
	assert.Equal(t, 404, resp.StatusCode, "%s", body)
	resp, body = do(t, "GET", ts.URL+"/v1/artifacts/text/upper/activity?since=soon", "", "")
	assert.Equal(t, 400, resp.StatusCode, "%s", body)

	// A hand edit of the artifact's file: the store sets it aside on its next read.
	rs, err := registry.Open(store)
	require.NoError(t, err)
	path := rs.ArtifactPath("text", "upper")
	rs.Close()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(b), "ToUpper", "ToUpper ", 1)), 0o644))
	_, err = f.Store().Load("text", "upper")
	require.ErrorIs(t, err, registry.ErrCorrupt)

	var q []registry.QuarantineReport
	require.Equal(t, 200, get(t, ts.URL+"/v1/quarantine", &q))
	require.Len(t, q, 1)
	assert.Equal(t, "artifact", q[0].Kind)
	resp, body = post(t, ts.URL+"/v1/admin/restore/"+q[0].ID, "", "")
	assert.Equal(t, 401, resp.StatusCode, "%s", body)
	resp, body = post(t, ts.URL+"/v1/admin/restore/"+q[0].ID, "s3cret", "")
	require.Equal(t, 200, resp.StatusCode, "%s", body)
	var rr registry.RestoreReport
	require.NoError(t, json.Unmarshal(body, &rr))
	assert.Equal(t, "accepted", rr.Action)
	require.Equal(t, 200, get(t, ts.URL+"/v1/quarantine", &q))
	assert.Empty(t, q)
	resp, body = post(t, ts.URL+"/v1/admin/dismiss/"+rr.Entry.ID, "s3cret", "")
	assert.Equal(t, 404, resp.StatusCode, "an entry is resolved once: %s", body)
}

// The console's files are served with a policy that runs only their own script; its listings
// over every role are refused to a client of some roles, as /v1/artifacts is.
func TestConsoleFilesAndClientIdentities(t *testing.T) {
	f := openForge(t, t.TempDir())
	_, ts := newTestServer(t, f, Options{AdminToken: "s3cret", Clients: testClients(t)})
	resp, body := post(t, ts.URL+"/v1/call/text/upper", aliceToken, `{"s":"a"}`)
	require.Equal(t, 200, resp.StatusCode, "%s", body)

	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(ts.URL + "/ui")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMovedPermanently, resp.StatusCode)
	assert.Equal(t, "/ui/", resp.Header.Get("Location"))
	assert.Contains(t, resp.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'", "every /ui response, the redirect too")
	resp, err = client.Get(ts.URL + "/ui/nothing-here")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.Contains(t, resp.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'", "a 404 under /ui/ too")
	for path, ctype := range map[string]string{"/ui/": "text/html", "/ui/app.js": "text/javascript", "/ui/app.css": "text/css"} {
		resp, err := http.Get(ts.URL + path) // no token: the files hold no data
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, 200, resp.StatusCode, "%s: %s", path, body)
		assert.Contains(t, resp.Header.Get("Content-Type"), ctype, path)
		assert.Contains(t, resp.Header.Get("Content-Security-Policy"), "script-src 'self'", path)
		assert.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"))
		assert.Equal(t, "DENY", resp.Header.Get("X-Frame-Options"), "no framing, in browsers without frame-ancestors too")
	}

	for _, tc := range []struct {
		path, token string
		status      int
	}{
		{"/v1/artifact-table", "", 401},
		{"/v1/artifact-table", aliceToken, 403}, // some roles: no listing over every role
		{"/v1/quarantine", aliceToken, 403},
		{"/v1/artifact-table", carolToken, 200},
		{"/v1/artifact-table", "s3cret", 200}, // the operator reads everything
		{"/v1/artifacts/text/upper/activity", aliceToken, 200},
		{"/v1/artifacts/text/upper/activity", bobToken, 403},
	} {
		resp, body := do(t, "GET", ts.URL+tc.path, tc.token, "")
		assert.Equal(t, tc.status, resp.StatusCode, "%s as %q: %s", tc.path, tc.token, body)
	}
}
