package server

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRedteam5ArtifactShowsAClientOnlyItsOwnSampledCalls: GET /v1/artifacts/{role}/{method}
// answered any client of the role with the artifact's sample of real calls, other clients'
// inputs and the answers they got, which the replay endpoints keep behind the admin token for
// that reason. A client reads the inputs its own calls offered; the operator reads them all.
func TestRedteam5ArtifactShowsAClientOnlyItsOwnSampledCalls(t *testing.T) {
	f := openForge(t, t.TempDir())
	const admin = "admin-token-0123456789"
	_, ts := newTestServer(t, f, Options{Clients: testClients(t), AdminToken: admin})
	for _, c := range [][2]string{{aliceToken, `{"s":"first"}`}, {aliceToken, `{"s":"alice-secret"}`}, {daveToken, `{"s":"dave-own"}`}} {
		resp, body := post(t, ts.URL+"/v1/call/text/upper", c[0], c[1])
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	}
	f.FlushSample()
	art := ts.URL + "/v1/artifacts/text/upper"

	resp, body := do(t, "GET", art, daveToken, "")
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	assert.NotContains(t, string(body), "alice-secret", "another client's input")
	assert.NotContains(t, string(body), "ALICE-SECRET", "the answer it got")
	assert.Contains(t, string(body), "dave-own", "its own")
	resp, body = do(t, "GET", art, carolToken, "")
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	assert.NotContains(t, string(body), "alice-secret", "a client of every role is still another client")

	resp, body = do(t, "GET", art, admin, "")
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	assert.Contains(t, string(body), "alice-secret", "the operator reads the whole sample")
	assert.Contains(t, string(body), "dave-own")
}
