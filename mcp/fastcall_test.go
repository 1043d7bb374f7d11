package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/forge"
)

// answers records, on the client's side, how each POST was answered (status and content type).
type answers struct {
	mu   sync.Mutex
	seen []string
}

func (a *answers) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && r.Method == http.MethodPost {
		a.mu.Lock()
		a.seen = append(a.seen, resp.Status+" "+resp.Header.Get("Content-Type"))
		a.mu.Unlock()
	}
	return resp, err
}

// plainJSON is how many POSTs were answered 200 with a JSON body: the fast path's answers (the
// SDK, as forge mounts it, answers calls with an event stream).
func (a *answers) plainJSON() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, s := range a.seen {
		if strings.HasPrefix(s, "200") && strings.HasSuffix(s, "application/json") {
			n++
		}
	}
	return n
}

// sdkClient connects the official SDK client to h served over HTTP.
func sdkClient(t *testing.T, h http.Handler) (*sdk.ClientSession, *answers) {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	a := &answers{}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t"}, nil).Connect(context.Background(),
		&sdk.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: &http.Client{Transport: a}}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs, a
}

// comparable is res as JSON with the call's duration left out.
func comparableResult(t *testing.T, res *sdk.CallToolResult) string {
	t.Helper()
	b, err := json.Marshal(res)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	if sc, ok := m["structuredContent"].(map[string]any); ok {
		if meta, ok := sc["meta"].(map[string]any); ok {
			delete(meta, "duration")
		}
	}
	b, err = json.Marshal(m)
	require.NoError(t, err)
	return string(b)
}

// warmServer is the MCP server of a store where text.upper has run once.
func warmServer(tb testing.TB) *Server {
	tb.Helper()
	f := openForge(tb, tb.TempDir())
	require.True(tb, f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`)).OK)
	s, err := New(f, Options{})
	require.NoError(tb, err)
	tb.Cleanup(s.Close)
	return s
}

// TestFastCallAnswersAsTheSDK drives forge's /mcp and the SDK's own streamable handler over the
// same server with the official client: every tool call gets the same answer (results, failures,
// refusals, unknown tools as JSON-RPC errors), and forge's answered the plain tool calls itself.
func TestFastCallAnswersAsTheSDK(t *testing.T) {
	s := warmServer(t)
	edge, fast := sdkClient(t, s.HTTPHandler())
	plain, slow := sdkClient(t, sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.SDK() }, nil))
	calls := []*sdk.CallToolParams{
		{Name: "forge_call", Arguments: map[string]any{"role": "text", "method": "upper", "args": map[string]any{"s": "hello"}}},
		{Name: ToolName("text", "upper"), Arguments: map[string]any{"s": "hello"}},
		{Name: "forge_call", Arguments: map[string]any{"role": "text", "method": "upper", "args": map[string]any{"s": 1}}}, // args refused
		{Name: "forge_call", Arguments: map[string]any{"role": "nope", "method": "upper"}},                                 // unknown role
		{Name: "forge_call", Arguments: map[string]any{"role": 3}},                                                         // arguments refused
		{Name: ToolName("text", "upper")}, // no arguments
		{Name: "forge_call", Arguments: map[string]any{"role": "text", "method": "upper", "args": map[string]any{"s": "é<>&"}}},
	}
	for _, p := range calls {
		want, err := plain.CallTool(context.Background(), p)
		require.NoError(t, err)
		got, err := edge.CallTool(context.Background(), p)
		require.NoError(t, err)
		assert.Equal(t, comparableResult(t, want), comparableResult(t, got), "%s %v", p.Name, p.Arguments)
	}
	assert.Equal(t, len(calls), fast.plainJSON(), "forge's /mcp answers each plain tool call itself")
	assert.Zero(t, slow.plainJSON())

	// What the fast path does not take, the SDK answers: an unknown tool (a JSON-RPC error), a
	// call with a progress token (its notifications travel on the call's event stream).
	_, werr := plain.CallTool(context.Background(), &sdk.CallToolParams{Name: "nope"})
	_, gerr := edge.CallTool(context.Background(), &sdk.CallToolParams{Name: "nope"})
	require.Error(t, gerr)
	assert.Equal(t, werr.Error(), gerr.Error())
	p := &sdk.CallToolParams{Name: "forge_call", Arguments: map[string]any{"role": "text", "method": "upper", "args": map[string]any{"s": "b"}}}
	p.SetProgressToken("tok")
	res, err := edge.CallTool(context.Background(), p)
	require.NoError(t, err)
	assert.False(t, res.IsError)
	assert.Equal(t, len(calls), fast.plainJSON())
}

// rawPost is one POST of body to url with headers h (name: value pairs).
func rawPost(t *testing.T, url, body string, h ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for i := 0; i+1 < len(h); i += 2 {
		req.Header.Set(h[i], h[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(b)
}

// rawSession opens a session as a client speaking raw JSON-RPC, with headers h.
func rawSession(t *testing.T, url string, h ...string) string {
	t.Helper()
	resp, body := rawPost(t, url, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, h...)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	sid := resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, sid)
	resp, body = rawPost(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, append(h, "Mcp-Session-Id", sid, "Mcp-Protocol-Version", "2025-06-18")...)
	require.Equal(t, http.StatusAccepted, resp.StatusCode, body)
	return sid
}

const upperCall = `{"jsonrpc":"2.0","id":ID,"method":"tools/call","params":{"name":"forge_call","arguments":{"role":"text","method":"upper","args":{"s":"hello"}}}}`

// TestFastCallKeepsTheSessionRules: the fast path answers only on a live session of the client
// that opened it, with a supported protocol version; the SDK answers everything else as before.
func TestFastCallKeepsTheSessionRules(t *testing.T) {
	s := warmServer(t)
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		if token == "alice" || token == "bob" {
			return &auth.TokenInfo{UserID: token, Scopes: []string{RoleScope("*")}, Expiration: time.Now().Add(time.Hour)}, nil
		}
		return nil, auth.ErrInvalidToken
	}
	ts := httptest.NewServer(auth.RequireBearerToken(verify, nil)(s.HTTPHandler()))
	t.Cleanup(ts.Close)
	alice := []string{"Authorization", "Bearer alice"}
	sid := rawSession(t, ts.URL, alice...)
	hdr := append(alice, "Mcp-Session-Id", sid, "Mcp-Protocol-Version", "2025-06-18")
	call := func(id string, h ...string) (*http.Response, string) {
		return rawPost(t, ts.URL, strings.Replace(upperCall, "ID", id, 1), h...)
	}

	resp, body := call("1", hdr...)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	var rpc struct {
		JSONRPC string             `json:"jsonrpc"`
		ID      any                `json:"id"`
		Result  sdk.CallToolResult `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &rpc), body)
	assert.Equal(t, "2.0", rpc.JSONRPC)
	assert.Equal(t, float64(1), rpc.ID)
	assert.False(t, rpc.Result.IsError)
	assert.Equal(t, `"HELLO"`, rpc.Result.Content[0].(*sdk.TextContent).Text)
	resp, body = call(`"a\"b"`, hdr...)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.True(t, strings.HasPrefix(body, `{"jsonrpc":"2.0","id":"a\"b","result":`), body)
	resp, body = call("10", hdr[:4]...) // no protocol version: the SDK's 2025-03-26
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))

	// Another client's token on alice's session: the SDK's refusal.
	resp, _ = call("2", append([]string{"Authorization", "Bearer bob"}, hdr[2:]...)...)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	// An unsupported protocol version, an unknown session: the SDK's answers.
	resp, _ = call("3", append(alice, "Mcp-Session-Id", sid, "Mcp-Protocol-Version", "1999-01-01")...)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	resp, _ = call("4", append(alice, "Mcp-Session-Id", "nope", "Mcp-Protocol-Version", "2025-06-18")...)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	// A batch, a call with _meta: the SDK's (event-stream) answers.
	resp, _ = rawPost(t, ts.URL, "["+strings.Replace(upperCall, "ID", "5", 1)+"]", hdr...)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "no batches from 2025-06-18 on")
	resp, body = rawPost(t, ts.URL, strings.Replace(strings.Replace(upperCall, "ID", "6", 1), `"name"`, `"_meta":{"progressToken":"p"},"name"`, 1), hdr...)
	assert.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	assert.Contains(t, body, "HELLO")

	// The session ends with its DELETE: a call on it right after is the SDK's 404.
	req, err := http.NewRequest("DELETE", ts.URL, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	dresp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	dresp.Body.Close()
	require.Equal(t, http.StatusNoContent, dresp.StatusCode)
	resp, _ = call("7", hdr...)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)

	// And with CloseSessions (a shutdown).
	sid = rawSession(t, ts.URL, alice...)
	hdr = append(alice, "Mcp-Session-Id", sid, "Mcp-Protocol-Version", "2025-06-18")
	resp, _ = call("8", hdr...)
	require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	s.CloseSessions()
	resp, _ = call("9", hdr...)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
}

// TestParseFastCall: the fast path takes exactly one plain tools/call.
func TestParseFastCall(t *testing.T) {
	for _, c := range []struct {
		body   string
		ok     bool
		id     string
		name   string
		hasArg bool
	}{
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"forge_call","arguments":{"a":1}}}`, true, `7`, "forge_call", true},
		{`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"t"}}`, true, `"x"`, "t", false},
		{`{"jsonrpc":"2.0","id":-3,"method":"tools/call","params":{"name":"t","arguments":{}}}`, true, `-3`, "t", true},
		{`{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{"name":"t"}}`, false, "", "", false},
		{`{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"t"}}`, false, "", "", false},
		{`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"t"}}`, false, "", "", false},                        // a notification
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"name":"t"}}`, false, "", "", false},                 // another method
		{`{"jsonrpc":"2.0","id":1,"Method":"tools/call","params":{"name":"t"}}`, false, "", "", false},                 // keys are exact
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{}}}`, false, "", "", false},      // _meta
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":[1]}}`, false, "", "", false}, // not an object
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":""}}`, false, "", "", false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"},"x":1}`, false, "", "", false},
		{`{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"t"}}`, false, "", "", false},
		{`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}]`, false, "", "", false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}`, false, "", "", false},
		{" {\n\t\"params\" : { \"arguments\" : {\"s\":\"}{,\\\"\"} , \"name\":\"t\" } , \"method\":\"tools/call\",\"id\" : \"a\\u0041\" ,\"jsonrpc\":\"2.0\"}\r\n", true, `"aA"`, "t", true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","method":"tools/call","params":{"name":"t"}}`, false, "", "", false}, // repeated
		{`{"jsonrpc":"2.0","id":1,"\u006dethod":"tools/call","params":{"name":"t"}}`, false, "", "", false},                  // escaped key
		{`{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{"name":"t"}}`, false, "", "", false},                      // escaped value
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t\u00e9"}}`, true, "1", "té", false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7}}`, false, "", "", false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[]}`, false, "", "", false},
		{`{"jsonrpc":"2.0","id":99999999999999999999,"method":"tools/call","params":{"name":"t"}}`, false, "", "", false},
	} {
		r, ok := parseFastCall([]byte(c.body))
		assert.Equal(t, c.ok, ok, c.body)
		if ok {
			assert.Equal(t, c.id, r.id, c.body)
			assert.Equal(t, c.name, r.name, c.body)
			assert.Equal(t, c.hasArg, r.args != nil, c.body)
		}
	}
}

// FuzzParseFastCall: whatever the fast path takes, encoding/json reads the same way (the fast
// path may leave more to the SDK, never take a different call).
func FuzzParseFastCall(f *testing.F) {
	f.Add([]byte(strings.Replace(upperCall, "ID", "1", 1)))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"t","arguments":{"a":[1,{"b":"}"}]}}}`))
	f.Add([]byte(` {"params":{"name":"t"} ,"id":-1,"method":"tools/call","jsonrpc":"2.0"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		got, ok := parseFastCall(body)
		if !ok {
			return
		}
		var msg struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Method  string          `json:"method"`
			Params  json.RawMessage `json:"params"`
		}
		require.NoError(t, json.Unmarshal(body, &msg))
		var params struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		require.NoError(t, json.Unmarshal(msg.Params, &params))
		assert.Equal(t, "2.0", msg.JSONRPC)
		assert.Equal(t, "tools/call", msg.Method)
		assert.Equal(t, params.Name, got.name)
		assert.Equal(t, string(params.Arguments), string(got.args))
		var wantID, gotID any
		require.NoError(t, json.Unmarshal(msg.ID, &wantID))
		require.NoError(t, json.Unmarshal([]byte(got.id), &gotID))
		assert.Equal(t, wantID, gotID)
		assert.Equal(t, msg.ID[0] == '"', got.id[0] == '"')
	})
}

// TestAppendToolResultMatchesSDK: the fast path writes a tool result byte for byte as the SDK's
// json.Marshal does, and leaves the results it does not know to it.
func TestAppendToolResultMatchesSDK(t *testing.T) {
	results := []*sdk.CallToolResult{
		outcomeResult(forge.Outcome{OK: true, Value: json.RawMessage(`"HELLO <&> \u2028"`), Meta: forge.Meta{ProgramSource: "persisted", ArtifactGen: 3, Duration: 1234, Decision: "execute:healthy"}}),
		outcomeResult(forge.Outcome{OK: true}),
		outcomeResult(forge.Outcome{OK: false, Err: &forge.Error{Type: "caller", Class: "caller", Rule: "args", Message: "s: want a string <b>"}}),
		errResult(errors.New("refused: client x may not call role y")),
		jsonResult(map[string]any{"a": 1}),
		{Content: []sdk.Content{&sdk.TextContent{Text: "t", Annotations: &sdk.Annotations{Priority: 1}}}, StructuredContent: forge.Outcome{OK: true}},
		{Content: []sdk.Content{&sdk.TextContent{Text: "t"}}, StructuredContent: forge.Outcome{OK: true, Value: json.RawMessage(`{"bad"`)}}, // AppendJSON refuses it
	}
	known := 0
	for _, r := range results {
		want, err := json.Marshal(r)
		got, ok := appendToolResult([]byte("x"), r)
		if err != nil {
			assert.False(t, ok, "a result json.Marshal refuses is left to it")
			assert.Equal(t, "x", string(got))
			continue
		}
		if !ok {
			assert.Equal(t, "x", string(got))
			continue
		}
		known++
		assert.Equal(t, "x"+string(want), string(got))
	}
	assert.Equal(t, 3, known, "outcomeResult's results are written by the fast path")

	// appendToolResult checks every field of the result and of its text content: a field the SDK
	// adds must be checked too.
	fields := func(v any) (names []string) {
		for f := range reflect.TypeOf(v).Fields() {
			if f.IsExported() {
				names = append(names, f.Name)
			}
		}
		return names
	}
	assert.Equal(t, []string{"Meta", "Content", "StructuredContent", "IsError", "InputRequests", "RequestState"}, fields(sdk.CallToolResult{}))
	assert.Equal(t, []string{"Text", "Meta", "Annotations"}, fields(sdk.TextContent{}))
}

// FuzzPlainCallArgs: forge_call's arguments read without decoding are what decodeArgs reads.
func FuzzPlainCallArgs(f *testing.F) {
	for _, s := range []string{`{"role":"text","method":"upper","args":{"s":"hello"}}`, `{"role":"a","method":"b"}`,
		`{"role":"a","method":"b","args":null}`, `{ "args" : [1,"}"] , "method":"m" ,"role":"r"}`, `{"Role":"a","method":"b"}`,
		`{"role":"a\u00e9","method":"b"}`, `{"role":"a","method":"b","gen":"x"}`, "{\"role\":\"\xff\",\"method\":\"b\"}", `{"role":3,"method":"b"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, arguments []byte) {
		role, method, args, ok := plainCallArgs(arguments)
		if !ok {
			return
		}
		a, err := decodeArgs(&sdk.CallToolRequest{Params: &sdk.CallToolParamsRaw{Arguments: arguments}})
		require.NoError(t, err)
		assert.Equal(t, a.Role, role)
		assert.Equal(t, a.Method, method)
		assert.Equal(t, string(a.Args), string(args))
	})
}

// TestFastCallCancelled: a call on the fast path ends with the client's notifications/cancelled
// (the SDK does not know the call), and its ID is refused to another call while it runs, with the
// SDK's error.
func TestFastCallCancelled(t *testing.T) {
	s := warmServer(t)
	edge := newHTTPEdge(s)
	started, release := make(chan struct{}), make(chan struct{})
	edge.tools = func(name string) toolHandler {
		if name != "block" {
			return s.fastTool(name)
		}
		return func(ctx context.Context, _ *sdk.CallToolRequest) *sdk.CallToolResult {
			close(started)
			select {
			case <-ctx.Done():
			case <-release: // the test failed: let the server close
			}
			return errResult(ctx.Err())
		}
	}
	ts := httptest.NewServer(edge)
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(release) }) // before ts.Close
	sid := rawSession(t, ts.URL)
	hdr := []string{"Mcp-Session-Id", sid, "Mcp-Protocol-Version", "2025-06-18"}
	done := make(chan string, 1)
	go func() {
		_, body := rawPost(t, ts.URL, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"block"}}`, hdr...)
		done <- body
	}()
	<-started
	resp, body := rawPost(t, ts.URL, strings.Replace(upperCall, "ID", "1", 1), hdr...)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"duplicate in-flight request ID 1"}}`, body)
	resp, body = rawPost(t, ts.URL, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"enough"}}`, hdr...)
	assert.Equal(t, http.StatusAccepted, resp.StatusCode, body)
	select {
	case body := <-done:
		assert.Contains(t, body, "context canceled")
	case <-time.After(time.Minute): // a guard against a hang, not a measure
		t.Fatal("the call did not end on notifications/cancelled")
	}
	resp, body = rawPost(t, ts.URL, strings.Replace(upperCall, "ID", "1", 1), hdr...)
	assert.Equal(t, http.StatusOK, resp.StatusCode, body)
}
