package gen

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEndpoint: the joins the model SDKs made, which existing base URL settings rely on.
func TestEndpoint(t *testing.T) {
	tests := []struct{ base, path, want string }{
		{"https://api.openai.com/v1/", "chat/completions", "https://api.openai.com/v1/chat/completions"},
		{"http://localhost:11434/v1", "chat/completions", "http://localhost:11434/v1/chat/completions"},
		{"http://localhost:8080", "chat/completions", "http://localhost:8080/chat/completions"},
		{"https://api.anthropic.com/", "v1/messages", "https://api.anthropic.com/v1/messages"},
		{"https://api.anthropic.com", "v1/messages", "https://api.anthropic.com/v1/messages"},
		{"https://gw.example/anthropic", "v1/messages", "https://gw.example/anthropic/v1/messages"},
		{"https://gw.example/v1", "v1/messages", "https://gw.example/v1/v1/messages"},
	}
	for _, tt := range tests {
		u, ok := ParseBaseURL(tt.base)
		require.True(t, ok, tt.base)
		assert.Equal(t, tt.want, Endpoint(u, tt.path).String(), tt.base)
	}
	for _, bad := range []string{"", "localhost:11434", "ftp://x/", "http://", "::"} {
		_, ok := ParseBaseURL(bad)
		assert.False(t, ok, bad)
	}
}

// TestPostJSONFollowsSameOriginRedirects: a server that moves its endpoint on the same origin
// (307 keeps the method and body) still answers.
func TestPostJSONFollowsSameOriginRedirects(t *testing.T) {
	var got []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/new", http.StatusTemporaryRedirect)
			return
		}
		got, _ = io.ReadAll(r.Body)
		_, _ = io.WriteString(w, `{"ok":true}`)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL + "/old")
	res, err := PostJSON(context.Background(), "test", Client(nil), u, nil, map[string]int{"n": 1}, time.Minute)
	require.NoError(t, err)
	assert.Equal(t, 200, res.Status)
	assert.JSONEq(t, `{"ok":true}`, string(res.Body))
	assert.JSONEq(t, `{"n":1}`, string(got))
}

// TestPostJSONBoundsTheBody: a body beyond MaxResponseBytes is refused, not read into memory.
func TestPostJSONBoundsTheBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := make([]byte, 1<<20)
		for range MaxResponseBytes>>20 + 1 {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	_, err := PostJSON(context.Background(), "test", Client(nil), u, nil, struct{}{}, time.Minute)
	assert.Equal(t, BadAnswer, KindOf(err))
	assert.ErrorContains(t, err, "larger than 32 MiB")
}
