package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runCLI runs the CLI in-process and returns its exit code, stdout and stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestStoreCommands(t *testing.T) {
	store := t.TempDir()
	contract := filepath.Join(t.TempDir(), "c.json")
	require.NoError(t, os.WriteFile(contract, []byte(`{"role":"text","purpose":"string tools","methods":{"upper":"func Upper(s string) string"}}`), 0o644))

	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		outHas string
		errHas string
	}{
		{"add from file", []string{"role", "add", "-f", contract}, 0, "role text saved", ""},
		{"add minimal", []string{"role", "add", "--role", "math", "--purpose", "numbers"}, 0, "role math saved", ""},
		{"add bad name", []string{"role", "add", "--role", "../evil", "--purpose", "x"}, 1, "", "lower-case letters"},
		{"add nothing", []string{"role", "add"}, 2, "", "give -f contract.json"},
		{"add bad file", []string{"role", "add", "-f", "/nonexistent.json"}, 1, "", "read /nonexistent.json"},
		{"ls", []string{"role", "ls"}, 0, "text", ""},
		{"show", []string{"role", "show", "text"}, 0, `"purpose": "string tools"`, ""},
		{"show missing", []string{"role", "show", "nope"}, 1, "", "forge role add"},
		{"show wrong arity", []string{"role", "show"}, 2, "", "want 1 argument"},
		{"artifact show missing", []string{"show", "text", "upper"}, 1, "", "first `forge call text upper`"},
		{"history missing", []string{"history", "text", "upper"}, 1, "", "not found"},
		{"ls empty", []string{"ls"}, 0, "no artifacts", ""},
		{"doctor clean", []string{"doctor"}, 0, "0 damaged", ""},
		{"unknown command", []string{"frobnicate"}, 2, "", "unknown command"},
		{"unknown flag", []string{"ls", "--frob"}, 2, "", "unknown flag"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, append([]string{"--store", store}, tc.args...)...)
			assert.Equal(t, tc.code, code, "stdout: %s\nstderr: %s", out, errOut)
			assert.Contains(t, out, tc.outHas)
			assert.Contains(t, errOut, tc.errHas)
		})
	}

	code, out, _ := runCLI(t, "--store", store, "--json", "role", "ls")
	require.Equal(t, 0, code)
	var roles []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &roles))
	assert.Len(t, roles, 2)
}

func TestDoctorExitsOneOnDamage(t *testing.T) {
	store := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(store, "tools", "text"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(store, "tools", "text", "upper.json"), []byte("{broken"), 0o644))
	code, out, errOut := runCLI(t, "--store", store, "doctor")
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "quarantined")
	assert.Contains(t, errOut, "1 file(s) in quarantine")
	code, _, _ = runCLI(t, "--store", store, "doctor")
	assert.Equal(t, 1, code, "the quarantine is pending until an operator deals with it")
	q, _ := filepath.Glob(filepath.Join(store, "quarantine", "tools__text__upper.json.*Z"))
	require.Len(t, q, 1, "nothing stored is lost: the damaged file is kept")
	code, _, errOut = runCLI(t, "--store", store, "quarantine", "restore", filepath.Base(q[0]))
	assert.Equal(t, 1, code, "bytes that are not an artifact cannot be put back")
	assert.Contains(t, errOut, "forge quarantine dismiss")
	code, _, _ = runCLI(t, "--store", store, "quarantine", "dismiss", filepath.Base(q[0]))
	assert.Equal(t, 0, code)
	code, _, _ = runCLI(t, "--store", store, "doctor")
	assert.Equal(t, 0, code)
	assert.FileExists(t, filepath.Join(store, "quarantine", "resolved", filepath.Base(q[0])))
}

// TestDoctorReportsTheWasmCache: doctor removes stale temp files from the wasm cache, keeps the
// rest, and reports its size in text and JSON.
func TestDoctorReportsTheWasmCache(t *testing.T) {
	store := t.TempDir()
	mods := filepath.Join(store, "cache", "wasm", "modules")
	require.NoError(t, os.MkdirAll(mods, 0o755))
	mod, tmp := filepath.Join(mods, "m.wasm"), filepath.Join(mods, ".tmp-1")
	require.NoError(t, os.WriteFile(mod, make([]byte, 2048), 0o644))
	require.NoError(t, os.WriteFile(tmp, []byte("partial"), 0o644))
	old := time.Now().Add(-3 * time.Hour)
	require.NoError(t, os.Chtimes(tmp, old, old))
	require.NoError(t, os.Chtimes(mod, old.Add(-1000*time.Hour), old.Add(-1000*time.Hour)))

	code, out, _ := runCLI(t, "--store", store, "doctor")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "removed leftover temp file "+tmp)
	assert.Contains(t, out, "wasm cache: 1 file(s), 2.0 KiB")
	assert.NoFileExists(t, tmp)
	assert.FileExists(t, mod, "doctor never evicts: that is prune's decision")

	code, out, _ = runCLI(t, "--store", store, "--json", "doctor")
	require.Equal(t, 0, code)
	var rep struct {
		Checked int `json:"checked"`
		Cache   struct {
			Kept      int   `json:"kept"`
			KeptBytes int64 `json:"kept_bytes"`
		} `json:"cache"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	assert.Equal(t, 1, rep.Cache.Kept)
	assert.Equal(t, int64(2048), rep.Cache.KeptBytes)
}
