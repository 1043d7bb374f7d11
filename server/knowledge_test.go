package server

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKnowledgeOverHTTP: /v1/knowledge records under the token's client, scoped to its roles;
// another client reads only what may reach its roles; confirm needs a lesson the client reads
// (issue 24 item 5).
func TestKnowledgeOverHTTP(t *testing.T) {
	f := openForge(t, t.TempDir())
	_, ts := newTestServer(t, f, Options{Clients: testClients(t)})
	kn := ts.URL + "/v1/knowledge"

	resp, body := post(t, kn, aliceToken, `{"content":"text roles keep ASCII","reasoning":"seen twice","domain":"forge"}`)
	require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", body)
	var rec struct {
		OK     bool `json:"ok"`
		Lesson struct {
			Content    string `json:"content"`
			Provenance struct {
				Source string   `json:"source"`
				Client string   `json:"client"`
				Roles  []string `json:"roles"`
			} `json:"provenance"`
		} `json:"lesson"`
	}
	require.NoError(t, json.Unmarshal(body, &rec))
	assert.Equal(t, "agent", rec.Lesson.Provenance.Source)
	assert.Equal(t, "alice", rec.Lesson.Provenance.Client)
	assert.Equal(t, []string{"text", "vault"}, rec.Lesson.Provenance.Roles)

	resp, body = post(t, kn, aliceToken, `{"content":"x","domain":"other"}`)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "%s", body)
	assert.Equal(t, "refused", errBody(t, body))
	resp, body = post(t, kn, aliceToken, `{"content":"x","domain":"forge","extra":1}`)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", body)
	resp, _ = post(t, kn, "", `{"content":"x","domain":"forge"}`)
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)

	recall := func(token string) []string {
		resp, body := do(t, "GET", kn+"?q="+url.QueryEscape("ASCII text")+"&min_confidence=0", token, "")
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
		var r struct {
			Lessons []struct {
				Content string `json:"content"`
			} `json:"lessons"`
		}
		require.NoError(t, json.Unmarshal(body, &r))
		var out []string
		for _, l := range r.Lessons {
			out = append(out, l.Content)
		}
		return out
	}
	assert.Equal(t, []string{"text roles keep ASCII"}, recall(aliceToken))
	assert.Equal(t, []string{"text roles keep ASCII"}, recall(carolToken), "a client of every role reads it")
	assert.Empty(t, recall(bobToken), "bob's role is not in the lesson's scope")

	resp, body = post(t, kn+"/confirm", bobToken, `{"domain":"forge","content":"text roles keep ascii"}`)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "%s", body)
	resp, body = post(t, kn+"/confirm", aliceToken, `{"domain":"forge","content":"text roles keep ascii"}`)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "alice recorded it: %s", body)
	assert.Contains(t, string(body), "counts each client once")
	resp, body = post(t, kn+"/confirm", carolToken, `{"domain":"forge","content":"text roles keep ascii"}`)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	assert.Contains(t, string(body), `"confidence":0.2`)
	resp, body = do(t, "GET", kn+"?q=x&limit=many", aliceToken, "")
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", body)
}
