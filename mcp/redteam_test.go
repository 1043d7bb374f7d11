package mcp

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRedteamFastCallEchoesOddIDsAsTheSDK: the fast path writes a request's ID back byte for byte
// as the SDK does (its answer to the same call with an empty _meta, which the fast path leaves to
// it), for IDs of odd spellings: HTML characters (the fast path escaped them, the SDK does not),
// line separators, invalid UTF-8, escapes, -0, integers past 2^53 (the SDK reads IDs through
// float64: it answered 2^63-1 as -2^63, the fast path as sent) and the int64 extremes.
func TestRedteamFastCallEchoesOddIDsAsTheSDK(t *testing.T) {
	ts, hdr := redteamSession(t)
	idOf := func(body string) string {
		if i := strings.Index(body, "data: "); i >= 0 { // the SDK's event stream
			body = body[i+len("data: "):]
		}
		i := strings.Index(body, `"id":`)
		require.GreaterOrEqual(t, i, 0, body)
		j := strings.Index(body[i:], `,"result"`)
		require.Greater(t, j, 0, body)
		return body[i : i+j]
	}
	for _, id := range []string{`"<a&b>"`, `"\u2028\u2029"`, "\"\xff\xfe\"", `"\ud800"`, `"\/x\u0041"`, `-0`, `9007199254740992`, `9007199254740993`, `-9007199254740993`, `9223372036854775807`, `-9223372036854775808`, `""`, `0`} {
		call := strings.Replace(upperCall, "ID", id, 1)
		resp, fast := rawPost(t, ts.URL, call, hdr...)
		require.Equal(t, http.StatusOK, resp.StatusCode, fast)
		resp, viaSDK := rawPost(t, ts.URL, strings.Replace(call, `"name"`, `"_meta":{},"name"`, 1), hdr...)
		require.Equal(t, http.StatusOK, resp.StatusCode, viaSDK)
		assert.Equal(t, idOf(viaSDK), idOf(fast), "id %s", id)
	}
}

// TestRedteamFastCallAnswersHTMLAsTheSDK: a result with HTML characters (<, >, &) is written as
// the SDK writes it, byte for byte (the call's duration aside).
func TestRedteamFastCallAnswersHTMLAsTheSDK(t *testing.T) {
	ts, hdr := redteamSession(t)
	call := strings.Replace(strings.Replace(upperCall, "ID", "1", 1), `"hello"`, `"<a&b>\u2028"`, 1)
	resp, fast := rawPost(t, ts.URL, call, hdr...)
	require.Equal(t, http.StatusOK, resp.StatusCode, fast)
	resp, viaSDK := rawPost(t, ts.URL, strings.Replace(call, `"name"`, `"_meta":{},"name"`, 1), hdr...)
	require.Equal(t, http.StatusOK, resp.StatusCode, viaSDK)
	if i := strings.Index(viaSDK, "data: "); i >= 0 {
		viaSDK = strings.TrimSpace(viaSDK[i+len("data: "):])
	}
	dur := regexp.MustCompile(`"duration":[0-9]+`)
	assert.Equal(t, dur.ReplaceAllString(viaSDK, `"duration":0`), dur.ReplaceAllString(strings.TrimSpace(fast), `"duration":0`))
}

// redteamSession serves a warm server's /mcp and opens a session: its URL and the headers of a
// call on the session.
func redteamSession(t *testing.T) (*httptest.Server, []string) {
	s := warmServer(t)
	ts := httptest.NewServer(s.HTTPHandler())
	t.Cleanup(ts.Close)
	return ts, []string{"Mcp-Session-Id", rawSession(t, ts.URL), "Mcp-Protocol-Version", "2025-06-18"}
}
