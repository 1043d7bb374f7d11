package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/forge"
)

// The edit verb refuses code that changes answers real calls got, and takes ?accept_changes=1.
func TestEditVerbAcceptChanges(t *testing.T) {
	f := openForge(t, t.TempDir())
	_, ts := newTestServer(t, f, Options{AdminToken: "s3cret"})
	for _, in := range []string{`{"s":"first"}`, `{"s":"abc"}`} {
		require.True(t, callOutcome(t, ts.URL, "text", "upper", in).OK)
	}
	f.FlushSample()
	changes := "package artifact\n\nimport \"strings\"\n\nfunc Upper(s string) string {\n\tif s == \"abc\" {\n\t\treturn s\n\t}\n\treturn strings.ToUpper(s)\n}\n"

	resp, body := post(t, ts.URL+"/v1/admin/edit/text/upper", "s3cret", changes)
	assert.NotEqual(t, http.StatusOK, resp.StatusCode)
	var o forge.Outcome
	require.NoError(t, json.Unmarshal(body, &o))
	require.False(t, o.OK)
	assert.Contains(t, o.Err.Message, `args {"s":"abc"}: was "ABC", now "abc"`)
	require.NotNil(t, o.Meta.Replay)
	assert.Equal(t, 1, o.Meta.Replay.Changed)

	resp, body = post(t, ts.URL+"/v1/admin/edit/text/upper?accept_changes=1", "s3cret", changes)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	require.NoError(t, json.Unmarshal(body, &o))
	require.True(t, o.OK, "%s", body)
	assert.Equal(t, 2, o.Meta.ArtifactGen)
	assert.True(t, o.Meta.Replay.Accepted)
}

// Replay and diff over HTTP: admin token, JSON POST only; the answers of both generations on the
// sample, and the code diff.
func TestReplayAndDiffEndpoints(t *testing.T) {
	f := openForge(t, t.TempDir())
	_, ts := newTestServer(t, f, Options{AdminToken: "s3cret"})
	for _, in := range []string{`{"s":"first"}`, `{"s":"abc"}`, `{"s":"xyz"}`} {
		require.True(t, callOutcome(t, ts.URL, "text", "upper", in).OK)
	}
	f.FlushSample()
	changes := "package artifact\n\nimport \"strings\"\n\nfunc Upper(s string) string {\n\tif s == \"abc\" {\n\t\treturn s\n\t}\n\treturn strings.ToUpper(s)\n}\n"
	resp, body := post(t, ts.URL+"/v1/admin/edit/text/upper?accept_changes=1", "s3cret", changes)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)

	base := ts.URL + "/v1/artifacts/text/upper/"
	resp, _ = post(t, base+"replay", "", "")
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "replay runs code and shows other callers' inputs: the admin token")
	req, err := http.NewRequest("POST", base+"replay", strings.NewReader(`{"gen":1}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer s3cret")
	req.Header.Set("Content-Type", "text/plain")
	resp, _ = roundTrip(t, req)
	assert.Equal(t, http.StatusUnsupportedMediaType, resp.StatusCode, "JSON only, as /v1/call")

	resp, body = post(t, base+"replay", "s3cret", "")
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	var rep struct {
		OK bool `json:"ok"`
		forge.Replay
	}
	require.NoError(t, json.Unmarshal(body, &rep))
	assert.True(t, rep.OK)
	assert.Equal(t, 2, rep.Replayed)
	assert.Equal(t, 2, rep.Same)

	resp, body = post(t, base+"replay", "s3cret", `{"gen":1}`)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	require.NoError(t, json.Unmarshal(body, &rep))
	assert.Equal(t, 1, rep.Changed, "gen-1 answers ABC where gen-2's sample says abc")

	resp, body = post(t, base+"diff", "s3cret", "")
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	var d forge.DiffReport
	require.NoError(t, json.Unmarshal(body, &d))
	assert.Equal(t, [2]int{1, 2}, [2]int{d.From, d.To})
	assert.Contains(t, d.Code, "+\tif s == \"abc\" {")
	require.Len(t, d.Diffs, 1)
	assert.Equal(t, `args {"s":"abc"}: was "ABC", now "abc"`, d.Diffs[0].String())

	resp, body = post(t, base+"diff", "s3cret", `{"from":1,"to":9}`)
	assert.Equal(t, http.StatusConflict, resp.StatusCode)
	assert.Contains(t, string(body), "keeps no generation 9")
	resp, body = post(t, base+"diff", "s3cret", `{"form":1}`)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, string(body), `unknown field \"form\"`)
	resp, _ = post(t, ts.URL+"/v1/artifacts/text/nosuch/replay", "s3cret", "")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)

	// The rollback verb replays the sample on the kept code: refused on a blessed artifact whose
	// answers it changes, unless ?accept_changes=1.
	resp, body = post(t, ts.URL+"/v1/admin/bless/text/upper", "s3cret", "")
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	resp, body = post(t, ts.URL+"/v1/admin/rollback/text/upper", "s3cret", "")
	assert.Equal(t, http.StatusConflict, resp.StatusCode)
	assert.Contains(t, string(body), `args {\"s\":\"abc\"}: was \"abc\", now \"ABC\"`)
	resp, body = post(t, ts.URL+"/v1/admin/rollback/text/upper?accept_changes=1", "s3cret", "")
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	assert.Contains(t, string(body), `"generation":3`)
}
