package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/registry"
)

// Operator verbs over HTTP write their event lines with the client the request's context names
// (a client identity: forge.WithClient), and `lift` is the way back from a mistaken quarantine
// (issue 22 item 9, issue 23 item 5).
func TestAdminVerbsAreLoggedAndLiftIsOne(t *testing.T) {
	store := t.TempDir()
	f := openForge(t, store)
	s, _ := newTestServer(t, f, Options{AdminToken: "s3cret"})
	// What an authenticating layer in front of the handlers does: name the client in the context.
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.ServeHTTP(w, r.WithContext(forge.WithClient(r.Context(), "client:ops")))
	}))
	t.Cleanup(ts.Close)
	require.True(t, callOutcome(t, ts.URL, "text", "upper", `{"s":"a"}`).OK)

	resp, body := post(t, ts.URL+"/v1/admin/quarantine/text/upper", "s3cret", "")
	require.Equal(t, 200, resp.StatusCode, "%s", body)
	resp, body = post(t, ts.URL+"/v1/admin/lift/text/upper", "s3cret", "")
	require.Equal(t, 200, resp.StatusCode, "%s", body)
	var o forge.Outcome
	require.NoError(t, json.Unmarshal(body, &o))
	require.True(t, o.OK, "%s", body)
	a, err := f.Store().Load("text", "upper")
	require.NoError(t, err)
	assert.Equal(t, registry.Candidate, a.Lifecycle)
	require.True(t, callOutcome(t, ts.URL, "text", "upper", `{"s":"a"}`).OK)
	resp, body = post(t, ts.URL+"/v1/admin/lift/text/upper", "s3cret", "")
	require.Equal(t, 409, resp.StatusCode, "%s", body)
	require.NoError(t, json.Unmarshal(body, &o))
	assert.False(t, o.OK, "nothing to lift")

	st, err := f.Stats(time.Time{})
	require.NoError(t, err)
	assert.Equal(t, int64(3), st.Overall.OperatorActions)
	evs, err := forge.ReadEvents(store)
	require.NoError(t, err)
	var who []string
	for i := range evs {
		if forge.IsOperatorAction(&evs[i]) {
			who = append(who, evs[i].Action+" by "+evs[i].Who)
		}
	}
	assert.Equal(t, []string{"quarantine by client:ops", "lift by client:ops", "lift by client:ops"}, who)
}

// An operator action that ran no code (bless, quarantine, lift, ...) is not counted as a call in
// the Prometheus metrics, although its line reaches the live subscribers.
func TestOperatorActionsAreNotCountedAsCalls(t *testing.T) {
	f := openForge(t, t.TempDir())
	s, _ := newTestServer(t, f, Options{})
	require.True(t, f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`)).OK)
	require.NoError(t, f.Bless("text", "upper", false))
	require.NoError(t, f.Quarantine("text", "upper"))
	require.True(t, f.LiftQuarantine(context.Background(), "text", "upper").OK)
	f.Flush()
	assert.Equal(t, 1.0, testutil.ToFloat64(s.metrics.calls.WithLabelValues("text", "upper", forge.SourceGenerated, "")))
	assert.Equal(t, 0.0, testutil.ToFloat64(s.metrics.calls.WithLabelValues("text", "upper", "", "")), "operator actions are not calls")
}
