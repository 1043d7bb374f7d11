package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// BenchmarkMCPTransport is a warm tool call from the SDK's client over the SDK's streamable HTTP
// transport (an SSE stream per POST), with the SDK's JSONResponse option (a plain JSON body), and
// over forge's handler (HTTPHandler: its fast path answers the plain call). JSONResponse is not
// used: progress notifications of a call that generates travel on the call's own stream (with
// JSONResponse they go to the standalone GET stream, which a client need not open); the fast path
// leaves a call with a progress token to the SDK's stream.
func BenchmarkMCPTransport(b *testing.B) {
	f := openForge(b, b.TempDir())
	require.True(b, f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`)).OK)
	s, err := New(f, Options{})
	require.NoError(b, err)
	b.Cleanup(func() { s.Close() })
	sdkHandler := func(opts *sdk.StreamableHTTPOptions) http.Handler {
		return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.SDK() }, opts)
	}
	for _, c := range []struct {
		name     string
		h        http.Handler
		progress bool // a progress token: forge's handler leaves the call to the SDK (sdkCall)
	}{{"sse", sdkHandler(nil), false}, {"json", sdkHandler(&sdk.StreamableHTTPOptions{JSONResponse: true}), false}, {"forge", s.HTTPHandler(), false},
		{"sse-progress", sdkHandler(nil), true}, {"forge-progress", s.HTTPHandler(), true}} {
		b.Run(c.name, func(b *testing.B) {
			ts := httptest.NewServer(c.h)
			defer ts.Close()
			cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench"}, nil).Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: ts.URL}, nil)
			require.NoError(b, err)
			defer cs.Close()
			tools, err := cs.ListTools(context.Background(), nil)
			require.NoError(b, err)
			name := ""
			for _, t := range tools.Tools {
				if strings.Contains(t.Name, "upper") {
					name = t.Name
				}
			}
			require.NotEmpty(b, name)
			p := &sdk.CallToolParams{Name: name, Arguments: map[string]any{"s": "hello"}}
			if c.progress {
				p.SetProgressToken("t")
			}
			b.ReportAllocs()
			for b.Loop() {
				res, err := cs.CallTool(context.Background(), p)
				if err != nil || res.IsError {
					b.Fatal(err, res)
				}
			}
		})
	}
}
