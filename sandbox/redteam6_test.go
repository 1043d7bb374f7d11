package sandbox

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRedteam6ReplayHostSendsOnlyGetAndHead: a replayed input's Host (Input.Replay) sends GET and
// HEAD, and refuses every other method without sending it; the refusal is the run's error
// (KindNotReplayable) even when the code swallows it and returns a value.
func TestRedteam6ReplayHostSendsOnlyGetAndHead(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	caps := Capabilities{HTTP: &HTTPCap{Allow: []string{strings.TrimPrefix(srv.URL, "http://")}}}
	for _, m := range []string{"", "get", "HEAD"} {
		h := NewHost(context.Background(), Input{Caps: caps, Replay: true})
		_, err := h.HTTP(HTTPRequest{Method: m, URL: srv.URL})
		require.NoError(t, err, "%q", m)
		require.NoError(t, h.Finish(&Output{}, nil))
	}
	assert.Equal(t, int64(3), hits.Load())
	for _, m := range []string{"POST", "put", "DELETE", "PATCH", "OPTIONS"} {
		h := NewHost(context.Background(), Input{Caps: caps, Replay: true})
		_, err := h.HTTP(HTTPRequest{Method: m, URL: srv.URL, Body: "x"})
		require.Error(t, err, m)
		assert.Equal(t, KindNotReplayable, AsError(err).Kind)
		assert.Contains(t, err.Error(), "not sent")
		err = h.Finish(&Output{}, nil) // the code went on and returned a value
		require.Error(t, err, "%s: the run's error whatever the code did", m)
		assert.Equal(t, KindNotReplayable, AsError(err).Kind)
	}
	assert.Equal(t, int64(3), hits.Load(), "nothing else was sent")
	h := NewHost(context.Background(), Input{Caps: caps})
	_, err := h.HTTP(HTTPRequest{Method: "POST", URL: srv.URL})
	require.NoError(t, err, "a call that is no replay sends")
	assert.Equal(t, int64(4), hits.Load())
}
