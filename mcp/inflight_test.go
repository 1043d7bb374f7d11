package mcp

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// blockingSDKTool adds to s's SDK server a tool "block" (which the fast path does not take, so
// the SDK answers it) that runs until release is closed; started says it runs.
func blockingSDKTool(t *testing.T, s *Server) (started chan struct{}, release func()) {
	t.Helper()
	started = make(chan struct{}, 8)
	stop := make(chan struct{})
	s.SDK().AddTool(&sdk.Tool{Name: "block", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			started <- struct{}{}
			select {
			case <-stop:
			case <-ctx.Done():
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "done"}}}, nil
		})
	var once sync.Once
	release = func() { once.Do(func() { close(stop) }) }
	t.Cleanup(release)
	return started, release
}

// waitFor is a guard against a hang, not a measure.
func waitFor[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(time.Minute):
		t.Fatalf("%s did not happen", what)
	}
	var zero T
	return zero
}

// rawSessionOn serves h, opens a raw session on it (with the headers creds) and returns its URL and
// the session's headers (creds first); release runs before the server closes (a blocked handler
// would hold the close).
func rawSessionOn(t *testing.T, h http.Handler, release func(), creds ...string) (string, []string) {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	t.Cleanup(release)
	return ts.URL, append(creds, "Mcp-Session-Id", rawSession(t, ts.URL, creds...), "Mcp-Protocol-Version", "2025-06-18")
}

// postAsync POSTs body and sends the answer's body on the channel it returns.
func postAsync(t *testing.T, url, body string, hdr []string) <-chan string {
	done := make(chan string, 1)
	go func() {
		_, b := rawPost(t, url, body, hdr...)
		done <- b
	}()
	return done
}

const dupID7 = `{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"duplicate in-flight request ID 7"}}`

// TestIDInFlightOnTheSDKIsRefusedOnTheFastPath: a call the SDK answers holds its request ID on
// the session: a plain call that reuses it meanwhile is refused with the SDK's own error, and is
// answered once the SDK's call has ended.
func TestIDInFlightOnTheSDKIsRefusedOnTheFastPath(t *testing.T) {
	s := warmServer(t)
	started, release := blockingSDKTool(t, s)
	url, hdr := rawSessionOn(t, s.HTTPHandler(), release)
	done := postAsync(t, url, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"block"}}`, hdr)
	waitFor(t, started, "the SDK's call")
	resp, body := rawPost(t, url, strings.Replace(upperCall, "ID", "7", 1), hdr...)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, body)
	assert.JSONEq(t, dupID7, body)
	resp, body = rawPost(t, url, strings.Replace(upperCall, "ID", `"7"`, 1), hdr...)
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the string \"7\" is another ID: %s", body)
	release()
	assert.Contains(t, waitFor(t, done, "the SDK's answer"), "done")
	resp, body = rawPost(t, url, strings.Replace(upperCall, "ID", "7", 1), hdr...)
	assert.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Contains(t, body, "HELLO")
}

// TestIDInFlightOnTheFastPathIsRefusedByTheSDK: the other way round, a request the SDK would
// answer (any method) is refused while the fast path answers a call of the same ID.
func TestIDInFlightOnTheFastPathIsRefusedByTheSDK(t *testing.T) {
	s := warmServer(t)
	edge := newHTTPEdge(s)
	started, stop := make(chan struct{}, 1), make(chan struct{})
	edge.tools = func(name string) toolHandler {
		if name != "slow" {
			return s.fastTool(name)
		}
		return func(context.Context, *sdk.CallToolRequest) *sdk.CallToolResult {
			started <- struct{}{}
			<-stop
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "done"}}}
		}
	}
	var once sync.Once
	release := func() { once.Do(func() { close(stop) }) }
	url, hdr := rawSessionOn(t, edge, release)
	done := postAsync(t, url, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow"}}`, hdr)
	waitFor(t, started, "the fast path's call")
	for _, req := range []string{
		`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":7.0,"method":"tools/list"}`, // the SDK's ID 7 too
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"forge_call","arguments":{},"_meta":{"progressToken":"p"}}}`,
	} {
		resp, body := rawPost(t, url, req, hdr...)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s: %s", req, body)
		assert.JSONEq(t, dupID7, body, req)
	}
	resp, body := rawPost(t, url, `{"jsonrpc":"2.0","id":8,"method":"tools/list"}`, hdr...)
	assert.Equal(t, http.StatusOK, resp.StatusCode, body)
	release()
	waitFor(t, done, "the fast path's answer")
	resp, body = rawPost(t, url, `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`, hdr...)
	assert.Equal(t, http.StatusOK, resp.StatusCode, body)
}

// TestAnsweredIDIsFreeAtOnce: a client that reuses one ID for every request, alternating the
// SDK's path and the fast path, is never refused: an ID is given back before its answer leaves.
func TestAnsweredIDIsFreeAtOnce(t *testing.T) {
	s := warmServer(t)
	url, hdr := rawSessionOn(t, s.HTTPHandler(), func() {})
	for i := range 20 {
		resp, body := rawPost(t, url, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, hdr...)
		require.Equal(t, http.StatusOK, resp.StatusCode, "round %d: %s", i, body)
		resp, body = rawPost(t, url, strings.Replace(upperCall, "ID", "1", 1), hdr...)
		require.Equal(t, http.StatusOK, resp.StatusCode, "round %d: %s", i, body)
		require.Contains(t, body, "HELLO")
	}
}

// callIDs records the request bodies the official client POSTs.
type callIDs struct {
	mu     sync.Mutex
	bodies []string
}

func (c *callIDs) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPost && r.Body != nil {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		c.mu.Lock()
		c.bodies = append(c.bodies, string(b))
		c.mu.Unlock()
	}
	return http.DefaultTransport.RoundTrip(r)
}

// idOf returns the ID of the recorded tools/call of tool name.
func (c *callIDs) idOf(name string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, b := range c.bodies {
		if strings.Contains(b, `"name":"`+name+`"`) {
			return messageIDs([]byte(b), true)
		}
	}
	return nil
}

// TestOfficialClientsIDInFlightIsRefusedToARawCall: the official client's call in flight on the
// SDK's path holds its ID on the session; a raw plain call on that session with that ID is
// refused, and the client's call ends with its answer.
func TestOfficialClientsIDInFlightIsRefusedToARawCall(t *testing.T) {
	s := warmServer(t)
	started, release := blockingSDKTool(t, s)
	ts := httptest.NewServer(s.HTTPHandler())
	url := ts.URL
	t.Cleanup(ts.Close)
	t.Cleanup(release)
	rec := &callIDs{}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t"}, nil).Connect(context.Background(),
		&sdk.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: &http.Client{Transport: rec}}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "block"})
		done <- err
	}()
	waitFor(t, started, "the client's call")
	ids := rec.idOf("block")
	require.Len(t, ids, 1)
	hdr := []string{"Mcp-Session-Id", cs.ID(), "Mcp-Protocol-Version", cs.InitializeResult().ProtocolVersion}
	resp, body := rawPost(t, url, strings.Replace(upperCall, "ID", ids[0], 1), hdr...)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, body)
	assert.Contains(t, body, "duplicate in-flight request ID "+ids[0])
	release()
	require.NoError(t, waitFor(t, done, "the client's answer"))
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "forge_call",
		Arguments: map[string]any{"role": "text", "method": "upper", "args": map[string]any{"s": "x"}}})
	require.NoError(t, err)
	assert.False(t, res.IsError)
}

// heldAtWrite records, at each Write, the IDs still held on its session.
type heldAtWrite struct {
	httptest.ResponseRecorder
	fs   *fastSession
	seen [][]string
}

func (w *heldAtWrite) Write(b []byte) (int, error) {
	w.fs.mu.Lock()
	var held []string
	for id := range w.fs.inflight {
		held = append(held, id)
	}
	w.fs.mu.Unlock()
	w.seen = append(w.seen, held)
	return len(b), nil
}

// TestReleaseWriterFreesAnIDBeforeItsAnswerLeaves: an SDK answer's ID is given back before the
// answer is written (so the client, once it has it, may reuse the ID); a notification on the
// call's stream, or another ID's answer, gives back nothing.
func TestReleaseWriterFreesAnIDBeforeItsAnswerLeaves(t *testing.T) {
	fs := &fastSession{inflight: map[string]context.CancelFunc{"1": nil, `"a"`: nil, "9": nil}}
	w := &heldAtWrite{fs: fs}
	rw := &releaseWriter{ResponseWriter: w, fs: fs, held: []string{"1", `"a"`}}
	for _, chunk := range []string{
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n",
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}\n\n", // not this POST's
		"event: message\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n",
		`{"jsonrpc":"2.0","id":"a","error":{"code":1,"message":"x"}}`,
	} {
		_, err := rw.Write([]byte(chunk))
		require.NoError(t, err)
	}
	assert.ElementsMatch(t, []string{"1", `"a"`, "9"}, w.seen[0])
	assert.ElementsMatch(t, []string{"1", `"a"`, "9"}, w.seen[1], "9 is not held by this writer")
	assert.ElementsMatch(t, []string{`"a"`, "9"}, w.seen[2], "1 is free when its answer is written")
	assert.ElementsMatch(t, []string{"9"}, w.seen[3])
	assert.Empty(t, rw.held)
}

// TestAnotherClientLearnsNothingOfTheSessionsIDs: a request on alice's session with bob's token
// gets the SDK's refusal, never the edge's answer that an ID is in flight there.
func TestAnotherClientLearnsNothingOfTheSessionsIDs(t *testing.T) {
	s := warmServer(t)
	started, release := blockingSDKTool(t, s)
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		return &auth.TokenInfo{UserID: token, Scopes: []string{RoleScope("*")}, Expiration: time.Now().Add(time.Hour)}, nil
	}
	url, hdr := rawSessionOn(t, auth.RequireBearerToken(verify, nil)(s.HTTPHandler()), release, "Authorization", "Bearer alice")
	done := postAsync(t, url, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"block"}}`, hdr)
	waitFor(t, started, "alice's call")
	bob := append([]string{}, hdr...)
	bob[1] = "Bearer bob"
	for _, req := range []string{`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`, strings.Replace(upperCall, "ID", "7", 1)} {
		resp, body := rawPost(t, url, req, bob...)
		assert.Equal(t, http.StatusForbidden, resp.StatusCode, "%s: %s", req, body)
		assert.NotContains(t, body, "in-flight")
	}
	resp, body := rawPost(t, url, `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`, hdr...)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "alice's own duplicate: %s", body)
	release()
	waitFor(t, done, "alice's answer")
}

// TestMessageIDs: the IDs the edge holds for the SDK, keyed as the SDK keys them.
func TestMessageIDs(t *testing.T) {
	for _, tc := range []struct {
		body  string
		calls bool
		want  []string
	}{
		{`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`, true, []string{"7"}},
		{`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`, false, nil},
		{`{"jsonrpc":"2.0","id":7,"result":{"id":8,"method":"m"}}`, false, []string{"7"}},
		{`{"jsonrpc":"2.0","id":7,"result":{}}`, true, nil},
		{`{"jsonrpc":"2.0","id":7.9,"method":"m"}`, true, []string{"7"}}, // the SDK truncates
		{`{"jsonrpc":"2.0","id":1e3,"method":"m"}`, true, []string{"1000"}},
		{`{"jsonrpc":"2.0","id":"<a>","method":"m"}`, true, []string{`"<a>"`}}, // no HTML escapes
		{`{"jsonrpc":"2.0","id":"7","method":"m"}`, true, []string{`"7"`}},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, true, nil},
		{`{"jsonrpc":"2.0","id":null,"method":"m"}`, true, nil},
		{`{"jsonrpc":"2.0","\u0069d":7,"method":"m"}`, true, nil}, // escaped: the SDK's to answer
		{` [ {"jsonrpc":"2.0","id":1,"method":"a"} , {"jsonrpc":"2.0","id":"b","method":"b"},{"jsonrpc":"2.0","id":1,"method":"c"}, {"jsonrpc":"2.0","method":"n"} ] `, true, []string{"1", `"b"`}},
		{`{"jsonrpc":"2.0","id":7,"method":`, true, nil},
		{`not json`, true, nil},
	} {
		assert.Equal(t, tc.want, messageIDs([]byte(tc.body), tc.calls), "%s (calls %v)", tc.body, tc.calls)
	}
}
