package server

import (
	"encoding/json"
	"net/http"
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
