package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// mcpPost is one POST of body to h with session's headers, answered in process.
func mcpPost(h http.Handler, session, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		r.Header.Set("Mcp-Session-Id", session)
		r.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// initSession opens a session on h as a client speaking raw JSON-RPC (internal/benchhttp's).
func initSession(tb testing.TB, h http.Handler) string {
	tb.Helper()
	w := mcpPost(h, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	require.Equal(tb, http.StatusOK, w.Code, w.Body.String())
	session := w.Header().Get("Mcp-Session-Id")
	require.NotEmpty(tb, session)
	w = mcpPost(h, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	require.Equal(tb, http.StatusAccepted, w.Code, w.Body.String())
	return session
}

// BenchmarkMCPHandler is the server's side of a warm forge_call over streamable HTTP (the request
// internal/benchhttp's /mcp target sends), the handler called in process with no network: through
// the SDK's handler alone (sdk), through forge's (mcp, with its fast path), beside the same call's
// forge.Call: the difference is what the MCP edge costs.
func BenchmarkMCPHandler(b *testing.B) {
	s := warmServer(b)
	f, args := s.f, json.RawMessage(`{"s":"hello"}`)
	b.Run("forge.Call", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if o := f.Call(context.Background(), "text", "upper", args); !o.OK {
				b.Fatal(o.Err)
			}
		}
	})
	for _, c := range []struct {
		name string
		h    http.Handler
	}{{"sdk", sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.SDK() }, nil)}, {"mcp", s.HTTPHandler()}} {
		b.Run(c.name, func(b *testing.B) { benchToolCall(b, c.h) })
	}
}

// benchToolCall calls forge_call text.upper on a session of h, in process.
func benchToolCall(b *testing.B, h http.Handler) {
	session := initSession(b, h)
	id := 0
	b.ReportAllocs()
	for b.Loop() {
		id++
		w := mcpPost(h, session, `{"jsonrpc":"2.0","id":`+strconv.Itoa(id)+`,"method":"tools/call","params":{"name":"forge_call","arguments":{"role":"text","method":"upper","args":{"s":"hello"}}}}`)
		if !strings.Contains(w.Body.String(), `HELLO`) {
			b.Fatal(w.Code, w.Body.String())
		}
	}
}
