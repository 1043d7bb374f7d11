package server

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/registry"
)

// TestRedteam6AClientReadsNoFailureText: an artifact's last failure reason is the text of the
// last failed call, which often echoes that call's input; GET /v1/artifacts/{role}/{method} and
// the console's /v1/artifact-table showed it to every client of the role (one client's input,
// another's to read). A client reads the class and that the text is withheld; the operator reads
// the text.
func TestRedteam6AClientReadsNoFailureText(t *testing.T) {
	f := openForge(t, t.TempDir())
	const admin = "admin-token-0123456789"
	_, ts := newTestServer(t, f, Options{Clients: testClients(t), AdminToken: admin})
	resp, body := post(t, ts.URL+"/v1/call/text/upper", aliceToken, `{"s":"first"}`)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	f.FlushSample()
	_, err := f.Store().Update("text", "upper", func(a *registry.Artifact, _ bool) error {
		a.LastFailureClass, a.LastFailureReason = "intrinsic", `cannot upper "alice-secret"`
		return nil
	})
	require.NoError(t, err)

	for _, u := range []string{"/v1/artifacts/text/upper", "/v1/artifact-table"} {
		for _, tok := range []string{daveToken, carolToken} {
			resp, body = do(t, "GET", ts.URL+u, tok, "")
			if tok == daveToken && u == "/v1/artifact-table" {
				continue // a listing: dave may call only some roles
			}
			require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
			assert.NotContains(t, string(body), "alice-secret", "%s: a client reads no failure text", u)
			assert.Contains(t, string(body), "withheld", "%s: says it was withheld", u)
			assert.Contains(t, string(body), `"last_failure_class":"intrinsic"`, "%s: the class stays", u)
		}
		resp, body = do(t, "GET", ts.URL+u, admin, "")
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
		assert.Contains(t, string(body), "alice-secret", "%s: the operator reads it", u)
	}
	assert.Contains(t, forge.WithheldFailureReason, "operator", "says who reads it")
}

// TestRedteam6AnUnknownFieldIsNotEchoedWhole: a request body with an unknown field of 100 KB got
// a 100 KB error back (/v1/knowledge, the replay endpoints, the contract of POST /v1/roles).
func TestRedteam6AnUnknownFieldIsNotEchoedWhole(t *testing.T) {
	f := openForge(t, t.TempDir())
	const admin = "admin-token-0123456789"
	_, ts := newTestServer(t, f, Options{Clients: testClients(t), AdminToken: admin})
	big := strings.Repeat("k", 100_000)
	for _, c := range [][3]string{
		{ts.URL + "/v1/knowledge", aliceToken, "(a field name of 100000 bytes)"},
		{ts.URL + "/v1/roles", carolToken, "(100000 bytes)"},
		{ts.URL + "/v1/artifacts/text/upper/replay", admin, "(a field name of 100000 bytes)"},
	} {
		resp, body := post(t, c[0], c[1], `{"`+big+`":1}`)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s: %.300s", c[0], body)
		assert.Less(t, len(body), 4000, "%s: %.300s", c[0], body)
		assert.Contains(t, string(body), c[2], c[0])
	}
	var many strings.Builder // distinct short unknown fields: each a problem naming what a contract takes
	many.WriteString(`{"role":"x","purpose":"p"`)
	for i := range 5000 {
		fmt.Fprintf(&many, `,"u%d":1`, i)
	}
	many.WriteString("}")
	resp, body := post(t, ts.URL+"/v1/roles", carolToken, many.String())
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "%.300s", body)
	assert.Less(t, len(body), many.Len(), "no amplification: %d bytes from %d", len(body), many.Len())
	assert.Contains(t, string(body), "and 4980 more unknown fields")
}
