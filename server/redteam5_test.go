package server

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	forgemcp "github.com/artifactforge/forge/mcp"
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

// TestRedteam5BeyondLoopbackKeepsTheHostCheckOnLoopback: bound beyond loopback with no host names
// given (--addr 0.0.0.0:7077), the server answered to any name, on every address it listens on,
// loopback included: a page on this machine that points a name of its own at 127.0.0.1 (DNS
// rebinding) was then the server's own origin, read its code, roles and events, and called it
// (same-origin POSTs pass the cross-site check). The names a server beyond loopback is reached by
// are unknown; on a loopback connection they are loopback's names, as the MCP SDK holds for /mcp.
func TestRedteam5BeyondLoopbackKeepsTheHostCheckOnLoopback(t *testing.T) {
	f := openForge(t, t.TempDir())
	s := New(f, Options{Logger: quietLogger()})
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done })
	_, port, err := net.SplitHostPort(ln.Addr().String())
	require.NoError(t, err)
	loop := "http://127.0.0.1:" + port

	rebound := "rebind.example:" + port
	resp, body := send(t, "GET", loop+"/v1/roles", "", map[string]string{"Host": rebound})
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "a rebound name on loopback reads nothing: %s", body)
	assert.Equal(t, "host_refused", errType(body))
	resp, body = send(t, "POST", loop+"/v1/call/text/upper", `{"s":"go"}`, map[string]string{"Host": rebound,
		"Origin": "http://" + rebound, "Sec-Fetch-Site": "same-origin", "Content-Type": "application/json"})
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "nor runs code: %s", body)
	resp, body = send(t, "GET", loop+"/v1/roles", "", map[string]string{"Host": "localhost:" + port})
	assert.Equal(t, http.StatusOK, resp.StatusCode, "loopback's own names: %s", body)

	// Reached beyond loopback, any name is still served.
	for _, a := range interfaceIPs(t) {
		resp, body = send(t, "GET", "http://"+net.JoinHostPort(a, port)+"/v1/roles", "", map[string]string{"Host": "forge.lan:" + port})
		assert.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", a, body)
	}
}

// interfaceIPs are this machine's IPv4 addresses that are not loopback (none: the beyond-loopback
// half of a test is skipped).
func interfaceIPs(t *testing.T) []string {
	addrs, err := net.InterfaceAddrs()
	require.NoError(t, err)
	var out []string
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			out = append(out, n.IP.String())
		}
	}
	if len(out) == 0 {
		t.Log("no address beyond loopback on this machine")
	}
	return out
}

// mcpPost is one POST of body to /mcp with token and headers h (name, value pairs).
func mcpPost(t *testing.T, url, token, body string, h ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	for i := 0; i+1 < len(h); i += 2 {
		req.Header.Set(h[i], h[i+1])
	}
	resp, b := roundTrip(t, req)
	return resp, string(b)
}

// TestRedteam5MCPBatchIsNoWayPastTheRate: a client's rate limit counts HTTP requests, and one
// POST to /mcp without an Mcp-Protocol-Version header (the SDK then reads it as 2025-03-26,
// which had JSON-RPC batches) carried a batch of any number of tool calls up to --max-body, each
// run (at once: the SDK serves a batch's calls concurrently). A batch is refused as the SDK
// refuses it from 2025-06-18 on: one message per request, each counted.
func TestRedteam5MCPBatchIsNoWayPastTheRate(t *testing.T) {
	f := openForge(t, t.TempDir())
	const eve = "eve-token-0123456789abcdef"
	cs, err := ParseClients([]byte("- {name: eve, token: " + eve + ", roles: [text], rate: 3/h}\n"))
	require.NoError(t, err)
	ms, err := forgemcp.New(f, forgemcp.Options{})
	require.NoError(t, err)
	defer ms.Close()
	_, ts := newTestServer(t, f, Options{Clients: cs, Extra: map[string]http.Handler{"/mcp": cs.MCP(ms.HTTPHandler())}, OnShutdown: ms.CloseSessions})
	url := ts.URL + "/mcp"

	resp, body := mcpPost(t, url, eve, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	sid := resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, sid)
	resp, body = mcpPost(t, url, eve, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "Mcp-Session-Id", sid)
	require.Equal(t, http.StatusAccepted, resp.StatusCode, body)

	const n = 40
	calls := make([]string, n)
	for i := range calls {
		calls[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"forge_call","arguments":{"role":"text","method":"upper","args":{"s":"batched"}}}}`, i+1)
	}
	resp, body = mcpPost(t, url, eve, "["+strings.Join(calls, ",")+"]", "Mcp-Session-Id", sid)
	ran := strings.Count(body, "BATCHED") / 2 // each result holds its value twice (text and structured)
	assert.LessOrEqual(t, ran, 1, "one request of a client limited to 3 an hour ran %d calls (status %d)", ran, resp.StatusCode)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", body)
	assert.Contains(t, body, "batch")

	// Nor past the fast path: a header it leaves to the SDK, white space before the array, no
	// session. (eve's rate is spent: a fresh one for each.)
	batch := "[" + strings.Join(calls[:3], ",") + "]"
	for name, c := range map[string]struct {
		body string
		h    []string
	}{
		"an MCP header":    {batch, []string{"Mcp-Session-Id", sid, "Mcp-Method", "tools/call"}},
		"leading spaces":   {strings.Repeat(" \n", 2000) + batch, []string{"Mcp-Session-Id", sid}},
		"no session":       {batch, nil},
		"a version header": {batch, []string{"Mcp-Session-Id", sid, "Mcp-Protocol-Version", "2025-03-26"}},
	} {
		cs.byHash[sha256.Sum256([]byte(eve))].lim.tokens = 3
		resp, body = mcpPost(t, url, eve, c.body, c.h...)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s: %s", name, body)
		assert.NotContains(t, body, "BATCHED", name)
	}
}
