package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// verStore makes a store with issue 23's role ver (func Get() string) and a replay cassette
// that writes its code; nothing is generated yet.
func verStore(t *testing.T) (store, cassette string) {
	t.Helper()
	store = t.TempDir()
	cf := filepath.Join(t.TempDir(), "ver.json")
	require.NoError(t, os.WriteFile(cf, []byte(`{"role":"ver","purpose":"the version","methods":{"get":"func Get() string"}}`), 0o644))
	require.Equal(t, 0, bin(t, nil, nil, storeArgs(store, "role", "add", "-f", cf)...).code)
	line, err := json.Marshal(map[string]any{"role": "ver", "method": "get", "kind": "generate", "attempt": 1,
		"code": "package artifact\n\nfunc Get() string { return \"v1\" }\n"})
	require.NoError(t, err)
	cassette = filepath.Join(t.TempDir(), "ver.jsonl")
	require.NoError(t, os.WriteFile(cassette, append(line, '\n'), 0o644))
	return store, cassette
}

// Issue 23 item 1, through the binary: the first `forge call ver get` (no args) prints the value
// of the call that generated the code, in JSON and in plain mode.
func TestBinZeroArgFirstCallAnswers(t *testing.T) {
	store, cassette := verStore(t)
	r := bin(t, nil, nil, storeArgs(store, "--provider", "replay:"+cassette, "call", "ver", "get", "--json")...)
	require.Equal(t, 0, r.code, r.stderr)
	var o struct {
		OK    bool            `json:"ok"`
		Value json.RawMessage `json:"value"`
		Meta  struct {
			ProgramSource string `json:"program_source"`
		} `json:"meta"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &o), r.stdout)
	assert.True(t, o.OK)
	assert.Equal(t, "generated", o.Meta.ProgramSource)
	assert.JSONEq(t, `"v1"`, string(o.Value), r.stdout)

	store, cassette = verStore(t)
	r = bin(t, nil, nil, storeArgs(store, "--provider", "replay:"+cassette, "call", "ver", "get")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, `"v1"`, strings.TrimSpace(r.stdout))
}
