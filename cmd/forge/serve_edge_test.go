package main

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBinServeGuards (issue 22 items 7 and 8, issue 23 item 9): the README's "Serving" section
// against the built `forge serve`: every flag it lists exists; a call as its curl line sends it is
// served; a text/plain call, a foreign Host and an unknown role are refused with the status it
// gives; --allowed-hosts lets a name in.
func TestBinServeGuards(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	_, sec, ok := strings.Cut(string(readme), "\n## Serving\n")
	require.True(t, ok, "README has a Serving section")
	sec, _, _ = strings.Cut(sec, "\n## ")
	help := bin(t, nil, nil, "serve", "--help").stdout
	flags := regexp.MustCompile("`(--[a-z-]+)`").FindAllStringSubmatch(sec, -1)
	require.NotEmpty(t, flags)
	for _, m := range flags {
		assert.Contains(t, help, m[1]+" ", "README's Serving names %s", m[1])
	}

	store := t.TempDir()
	require.Equal(t, 0, bin(t, nil, nil, storeArgs(store, "role", "add", "--role", "text", "--purpose", "string utilities")...).code)
	_, base := startServe(t, store, "--allowed-hosts", "forge.internal")
	send := func(host, ctype, url, body string) (int, string) {
		req, err := http.NewRequest("POST", base+url, strings.NewReader(body))
		require.NoError(t, err)
		if host != "" {
			req.Host = host
		}
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	st, body := send("", "application/json", "/v1/call/text/upper", `{"s":"go"}`)
	assert.Equal(t, 200, st, body)
	assert.Contains(t, body, `"GO"`)
	st, body = send("", "text/plain", "/v1/call/text/upper", `{"s":"go"}`)
	assert.Equal(t, 415, st, body)
	st, body = send("evil.example", "application/json", "/v1/call/text/upper", `{"s":"go"}`)
	assert.Equal(t, 403, st, body)
	assert.Contains(t, body, "--allowed-hosts")
	st, body = send("forge.internal:7077", "application/json", "/v1/call/text/upper", `{"s":"go"}`)
	assert.Equal(t, 200, st, body)
	st, body = send("", "application/json", "/v1/call/nope/upper", `{}`)
	assert.Equal(t, 404, st, body)
}

// --model-calls takes N/h (N/m, N/s) or off; anything else is a usage error before anything opens.
func TestModelCallsFlagRefusesNonsense(t *testing.T) {
	for _, cmd := range []string{"serve", "mcp"} {
		var stdout, stderr bytes.Buffer
		code := run([]string{cmd, "--store", t.TempDir(), "--model-calls", "lots"}, &stdout, &stderr)
		assert.Equal(t, exitUsage, code, "%s: %s", cmd, stderr.String())
		assert.Contains(t, stderr.String(), "--model-calls")
		assert.Contains(t, stderr.String(), "N/h")
	}
}
