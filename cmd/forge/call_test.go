package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/registry"
)

const upperCassette = `{"role":"text","method":"upper","kind":"generate","attempt":1,"code":"package artifact\n\nimport \"strings\"\n\nfunc Upper(s string) string { return strings.ToUpper(s) }\n"}
{"role":"text","method":"upper","kind":"generate","attempt":2,"code":"package artifact\n\nimport \"strings\"\n\n// Upper shouts.\nfunc Upper(s string) string { return strings.ToUpper(s) }\n"}
`

func TestCallArgs(t *testing.T) {
	argsFile := filepath.Join(t.TempDir(), "args.json")
	require.NoError(t, os.WriteFile(argsFile, []byte(`{"from":"file"}`), 0o644))
	for _, tc := range []struct {
		flag  string
		pairs []string
		want  string
		err   string
	}{
		{"", nil, "", ""},
		{`["a"]`, nil, `["a"]`, ""},
		{`{"n":1}`, []string{"s=hi"}, `{"n":1,"s":"hi"}`, ""},
		{"", []string{"n=3", "ok=true", "xs=[1,2]", "s=hello world", "e="}, `{"e":"","n":3,"ok":true,"s":"hello world","xs":[1,2]}`, ""},
		{"{bad", nil, "", "not valid JSON"},
		{"[1]", []string{"a=1"}, "", "must be a JSON object"},
		{"", []string{"novalue"}, "", "not name=value"},
		{"", []string{"s=a", "s=b"}, "", "given twice"},
		{`{"s":"a"}`, []string{"s=b"}, "", "given both in --args"},
		{"", []string{"s=\xff\xfe"}, "", "not valid UTF-8"},
		{"{\"s\":\"\xc3\x28\"}", nil, "", "not valid UTF-8 (byte 0xc3 at offset 6)"},
		{"-", nil, `{"from":"stdin"}`, ""},
		{"@" + argsFile, []string{"n=2"}, `{"from":"file","n":2}`, ""},
		{"@/nonexistent/args.json", nil, "", "--args @/nonexistent/args.json"},
	} {
		got, err := callArgs(tc.flag, tc.pairs, strings.NewReader(` {"from":"stdin"}`+"\n"))
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err)
			continue
		}
		require.NoError(t, err)
		if tc.want == "" {
			assert.Nil(t, got)
		} else {
			assert.JSONEq(t, tc.want, string(got))
		}
	}
}

func TestParseAge(t *testing.T) {
	d, err := parseAge("30d")
	require.NoError(t, err)
	assert.Equal(t, 30*24*time.Hour, d)
	d, err = parseAge("90m")
	require.NoError(t, err)
	assert.Equal(t, 90*time.Minute, d)
	for _, bad := range []string{"", "d", "-3d", "soon", "-1s"} {
		_, err := parseAge(bad)
		assert.Error(t, err, bad)
	}
	// Zero is an age: `forge prune --older-than 0s` means everything not used as of now
	// (issue 23, item 11: it said "0s" is not an age).
	for _, zero := range []string{"0s", "0d", "0"} {
		d, err := parseAge(zero)
		assert.NoError(t, err, zero)
		assert.Zero(t, d, zero)
	}
}

func TestCallLifecycleCommands(t *testing.T) {
	t.Setenv("FORGE_PROVIDER", "")
	store := t.TempDir()
	cas := filepath.Join(t.TempDir(), "cassette.jsonl")
	require.NoError(t, os.WriteFile(cas, []byte(upperCassette), 0o644))
	s := func(args ...string) []string { return append([]string{"--store", store}, args...) }
	p := "--provider=replay:" + cas

	code, _, _ := runCLI(t, s("role", "add", "--role", "text", "--purpose", "string utilities")...)
	require.Equal(t, 0, code)

	code, _, errOut := runCLI(t, s("call", "text", "upper", "s=hi")...)
	assert.Equal(t, 1, code, "no provider configured")
	assert.Contains(t, errOut, "FORGE_PROVIDER")

	code, out, errOut := runCLI(t, s("call", "text", "upper", "s=hi", p)...)
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, "\"HI\"\n", out)

	code, out, _ = runCLI(t, s("--json", "call", "text", "upper", "--args", `["yo"]`)...)
	require.Equal(t, 0, code, "persisted code runs without a provider")
	var o map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &o))
	assert.Equal(t, "YO", o["value"])
	assert.Equal(t, "persisted", o["meta"].(map[string]any)["program_source"])

	code, _, errOut = runCLI(t, s("call", "text", "upper", "wrong=1")...)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "caller")

	code, _, _ = runCLI(t, s("call", "text")...)
	assert.Equal(t, 2, code)

	// A new process replays the cassette from its first line: the regeneration's answer is the
	// current code byte for byte, so no generation is added (issue 9 item 8).
	code, out, errOut = runCLI(t, s("regen", "text", "upper", p)...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "generation 1 kept, nothing added to the history")

	regen := filepath.Join(t.TempDir(), "regen.jsonl")
	require.NoError(t, os.WriteFile(regen, []byte(strings.Replace(strings.SplitN(upperCassette, "\n", 3)[1], `"attempt":2`, `"attempt":1`, 1)+"\n"), 0o644))
	code, out, errOut = runCLI(t, s("regen", "text", "upper", "--provider=replay:"+regen)...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "generation 2")

	code, out, _ = runCLI(t, s("history", "text", "upper")...)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "operator:regen")

	code, out, _ = runCLI(t, s("rollback", "text", "upper", "gen-1")...)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "operator:rollback:gen-1")

	code, _, _ = runCLI(t, s("rollback", "text", "upper", "x")...)
	assert.Equal(t, 2, code)

	code, _, _ = runCLI(t, s("quarantine", "text", "upper")...)
	require.Equal(t, 0, code)
	code, _, errOut = runCLI(t, s("call", "text", "upper", "s=a")...)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "forge rollback text upper")

	code, _, _ = runCLI(t, s("rollback", "text", "upper")...)
	require.Equal(t, 0, code)
	code, out, _ = runCLI(t, s("bless", "text", "upper", "--reset-metrics")...)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "blessed")

	code, out, _ = runCLI(t, s("regen", "text", "upper", "--next-call")...)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "next call")

	code, out, _ = runCLI(t, s("stale")...)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "no stale")
	code, _, _ = runCLI(t, s("role", "add", "--role", "text", "--purpose", "changed purpose")...)
	require.Equal(t, 0, code)
	code, out, _ = runCLI(t, s("stale")...)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "contract changed")

	code, out, _ = runCLI(t, s("prune", "--older-than", "1h")...)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "would archive 0")
	code, _, _ = runCLI(t, s("prune", "--older-than", "soon")...)
	assert.Equal(t, 2, code)
}

func TestOptionsFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	o, err := optionsFromEnv(env(nil))
	require.NoError(t, err)
	assert.False(t, o.Switches.ReadPathOff || o.Switches.RepairOff || o.Switches.GenerateOnly)
	o, err = optionsFromEnv(env(map[string]string{"FORGE_READ_PATH": "off", "FORGE_REPAIR": "OFF", "FORGE_GENERATE_ONLY": "1",
		"FORGE_CANARY": "text, math", "FORGE_MAX_PROVIDER_CALLS": "5", "FORGE_MAX_REPAIRS_BEFORE_REGEN": "1"}))
	require.NoError(t, err)
	assert.True(t, o.Switches.ReadPathOff && o.Switches.RepairOff && o.Switches.GenerateOnly)
	assert.Equal(t, []string{"text", "math"}, o.Switches.Canary)
	assert.Equal(t, 5, o.MaxProviderCalls)
	assert.Equal(t, 1, o.Budget.Max())
	for k, v := range map[string]string{"FORGE_READ_PATH": "maybe", "FORGE_GENERATE_ONLY": "yes please", "FORGE_CANARY": "Bad/Role",
		"FORGE_MAX_PROVIDER_CALLS": "0", "FORGE_MAX_REPAIRS_BEFORE_REGEN": "-1"} {
		_, err := optionsFromEnv(env(map[string]string{k: v}))
		assert.ErrorContains(t, err, k)
	}
}

func TestPruneArchivesUnusedArtifacts(t *testing.T) {
	t.Setenv("FORGE_PROVIDER", "")
	store := t.TempDir()
	cas := filepath.Join(t.TempDir(), "cassette.jsonl")
	require.NoError(t, os.WriteFile(cas, []byte(upperCassette), 0o644))
	s := func(args ...string) []string { return append([]string{"--store", store}, args...) }
	code, _, _ := runCLI(t, s("role", "add", "--role", "text", "--purpose", "string utilities")...)
	require.Equal(t, 0, code)
	code, _, errOut := runCLI(t, s("call", "text", "upper", "s=hi", "--provider=replay:"+cas)...)
	require.Equal(t, 0, code, errOut)

	st, err := registry.Open(store)
	require.NoError(t, err)
	old := time.Now().Add(-48 * time.Hour)
	_, err = st.Update("text", "upper", func(a *registry.Artifact, _ bool) error {
		a.LastUsedAt, a.CreatedAt = &old, old
		return nil
	})
	require.NoError(t, err)

	code, out, _ := runCLI(t, s("prune", "--older-than", "30d")...)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "would archive 0")
	code, out, _ = runCLI(t, s("prune", "--older-than", "1d")...)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "would archive text.upper")
	a, err := st.Load("text", "upper")
	require.NoError(t, err)
	assert.Equal(t, registry.Candidate, a.Lifecycle, "a dry run changes nothing")

	code, out, _ = runCLI(t, s("prune", "--older-than", "1d", "--dry-run=false")...)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "archived text.upper")
	a, err = st.Load("text", "upper")
	require.NoError(t, err)
	assert.Equal(t, registry.Archived, a.Lifecycle)

	code, out, _ = runCLI(t, s("--json", "call", "text", "upper", "s=back")...)
	require.Equal(t, 0, code, "an archived artifact still answers (the call revives it)")
	assert.Contains(t, out, `"decision": "execute:archived"`)
	a, err = st.Load("text", "upper")
	require.NoError(t, err)
	assert.Equal(t, registry.Durable, a.Lifecycle, "the call revived it")
}

// TestPruneRemovesUnusedWasmCache: prune reports, then removes, wasm cache files unused for the
// age, keeps recent ones, and says so in its JSON.
func TestPruneRemovesUnusedWasmCache(t *testing.T) {
	store := t.TempDir()
	s := func(args ...string) []string { return append([]string{"--store", store}, args...) }
	mods := filepath.Join(store, "cache", "wasm", "modules")
	require.NoError(t, os.MkdirAll(mods, 0o755))
	oldMod, newMod := filepath.Join(mods, "old.wasm"), filepath.Join(mods, "new.wasm")
	require.NoError(t, os.WriteFile(oldMod, make([]byte, 3000), 0o644))
	require.NoError(t, os.WriteFile(newMod, make([]byte, 10), 0o644))
	old := time.Now().Add(-72 * time.Hour)
	require.NoError(t, os.Chtimes(oldMod, old, old))

	code, out, _ := runCLI(t, s("prune", "--older-than", "2d")...)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "would remove 1 wasm cache file(s) (2.9 KiB); kept 1 (10 B)")
	assert.FileExists(t, oldMod)

	code, out, _ = runCLI(t, s("--json", "prune", "--older-than", "2d", "--dry-run=false")...)
	require.Equal(t, 0, code)
	var rep struct {
		Cache struct {
			Removed []struct{ Path string } `json:"removed"`
			Kept    int                     `json:"kept"`
		} `json:"cache"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	require.Len(t, rep.Cache.Removed, 1)
	assert.Equal(t, oldMod, rep.Cache.Removed[0].Path)
	assert.Equal(t, 1, rep.Cache.Kept)
	assert.NoFileExists(t, oldMod)
	assert.FileExists(t, newMod)
}
