package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/forge"
)

// The done-when scenario through the CLI: a regeneration right on the contract but wrong on an
// input real calls used is refused for a blessed artifact (exit 1) with the input and both
// answers; --accept-changes promotes it and `forge history` shows the replay.
func TestRegenRefusesChangedAnswersOfABlessedArtifact(t *testing.T) {
	t.Setenv("FORGE_PROVIDER", "")
	store := t.TempDir()
	s := func(args ...string) []string { return append([]string{"--store", store}, args...) }
	cassette := func(code string) string {
		line, err := json.Marshal(map[string]any{"role": "text", "method": "upper", "kind": "generate", "attempt": 1, "code": code})
		require.NoError(t, err)
		p := filepath.Join(t.TempDir(), "c.jsonl")
		require.NoError(t, os.WriteFile(p, append(line, '\n'), 0o644))
		return "--provider=replay:" + p
	}
	code, _, errOut := runCLI(t, s("role", "add", "--role", "text", "--purpose", "string utilities")...)
	require.Equal(t, 0, code, errOut)
	gen1 := cassette("package artifact\n\nimport \"strings\"\n\nfunc Upper(s string) string { return strings.ToUpper(s) }\n")
	for _, in := range []string{"first", "abc", "hello"} {
		code, _, errOut = runCLI(t, s("call", "text", "upper", "s="+in, gen1)...)
		require.Equal(t, 0, code, errOut)
	}
	code, _, errOut = runCLI(t, s("bless", "text", "upper")...)
	require.Equal(t, 0, code, errOut)

	wrong := cassette("package artifact\n\nimport \"strings\"\n\nfunc Upper(s string) string {\n\tif strings.Contains(s, \"b\") {\n\t\treturn s\n\t}\n\treturn strings.ToUpper(s)\n}\n")
	code, _, errOut = runCLI(t, s("regen", "text", "upper", wrong)...)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, `args {"s":"abc"}: was "ABC", now "abc"`)
	assert.Contains(t, errOut, "--accept-changes")

	code, out, errOut := runCLI(t, s("regen", "text", "upper", "--accept-changes", wrong)...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "replayed 2 sampled input(s): 1 same, 1 changed (accepted)")
	assert.Contains(t, out, `changed: args {"s":"abc"}: was "ABC", now "abc"`)

	code, out, _ = runCLI(t, s("history", "text", "upper")...)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "gen-2: replayed 2 sampled input(s): 1 same, 1 changed (accepted)")

	// forge diff: the code and the answers that differ (exit 3), default previous vs current.
	code, out, errOut = runCLI(t, s("diff", "text", "upper")...)
	assert.Equal(t, 3, code, errOut)
	assert.Contains(t, out, "--- gen-1\n+++ gen-2\n")
	assert.Contains(t, out, "+\tif strings.Contains(s, \"b\") {\n")
	assert.Contains(t, out, "2 sampled input(s) replayed on gen-1 and gen-2: 1 same, 1 changed, 0 now succeed, 0 now fail")
	assert.Contains(t, out, `changed: args {"s":"abc"}: was "ABC", now "abc"`)
	assert.Contains(t, errOut, "gen-1 and gen-2 answer 1 sampled input(s) differently")
	code, out, _ = runCLI(t, s("diff", "--json", "text", "upper", "gen-2", "1")...)
	assert.Equal(t, 3, code)
	var d struct {
		OK bool `json:"ok"`
		forge.DiffReport
	}
	require.NoError(t, json.Unmarshal([]byte(out), &d), out)
	assert.True(t, d.OK, "an action that runs code says ok")
	assert.Equal(t, [2]int{2, 1}, [2]int{d.From, d.To})
	assert.Equal(t, 1, d.Changed)
	code, _, errOut = runCLI(t, s("diff", "text", "upper", "2")...)
	assert.Equal(t, 2, code, "one generation alone is a usage error")
	assert.Contains(t, errOut, "give two generations or none")
	code, _, errOut = runCLI(t, s("diff", "text", "upper", "1", "9")...)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "keeps no generation 9")

	// A rollback of a blessed artifact replays the sample on the kept code first.
	code, _, errOut = runCLI(t, s("bless", "text", "upper")...)
	require.Equal(t, 0, code, errOut)
	code, _, errOut = runCLI(t, s("rollback", "text", "upper")...)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, `args {"s":"abc"}: was "abc", now "ABC"`)
	code, out, errOut = runCLI(t, s("rollback", "text", "upper", "--accept-changes")...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "gen-3: replayed 2 sampled input(s): 1 same, 1 changed (accepted)")
}

// forge replay reports agreement on the current and an earlier generation; forge sample shows
// the kept inputs and `sample purge` drops them.
func TestReplayAndSampleCommands(t *testing.T) {
	t.Setenv("FORGE_PROVIDER", "")
	store := t.TempDir()
	s := func(args ...string) []string { return append([]string{"--store", store}, args...) }
	cas := filepath.Join(t.TempDir(), "c.jsonl")
	require.NoError(t, os.WriteFile(cas, []byte(upperCassette), 0o644))
	code, _, errOut := runCLI(t, s("role", "add", "--role", "text", "--purpose", "string utilities")...)
	require.Equal(t, 0, code, errOut)
	for _, in := range []string{"first", "abc", "hello"} {
		code, _, errOut = runCLI(t, s("call", "text", "upper", "s="+in, "--provider=replay:"+cas)...)
		require.Equal(t, 0, code, errOut)
	}
	code, out, errOut := runCLI(t, s("replay", "text", "upper")...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "text.upper: 2 of 2 sampled answers agree")
	code, _, errOut = runCLI(t, s("replay", "text", "upper", "--gen", "7")...)
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errOut, "keeps no generation 7 (it keeps gen-1)")

	code, out, _ = runCLI(t, s("sample", "text", "upper")...)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "keeps 2 sampled call(s)")
	assert.Contains(t, out, `args {"s":"abc"}: "ABC"`)
	code, out, errOut = runCLI(t, s("sample", "purge", "text", "upper")...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "sample purged")
	code, _, errOut = runCLI(t, s("replay", "text", "upper")...)
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errOut, "no sample of real calls")
}
