package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/registry"
)

// These tests drive the BUILT forge binary, as an operator or an agent that shells out would.

type binResult struct {
	code           int
	stdout, stderr string
}

// bin runs the built forge with args (stdin may be nil) and returns its exit code and output.
func bin(t *testing.T, stdin io.Reader, env []string, args ...string) binResult {
	t.Helper()
	path, err := forgeBinary()
	require.NoError(t, err)
	cmd := exec.Command(path, args...)
	cmd.Stdin = stdin
	cmd.Env = append(append(os.Environ(), "FORGE_PROVIDER=", "FORGE_SANDBOX=yaegi"), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	done := make(chan error, 1)
	require.NoError(t, cmd.Start())
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(3 * time.Minute): // a hang, not a speed bound
		_ = cmd.Process.Kill()
		t.Fatalf("forge %v did not end", args)
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	assert.NotContains(t, errb.String(), "forge: forge:", "one prefix is enough")
	return binResult{code, out.String(), errb.String()}
}

func storeArgs(store string, args ...string) []string {
	return append([]string{"--store", store}, args...)
}

// putArtifact stores an artifact for role.method verified against the role's current contract.
func putArtifact(t *testing.T, store, role, method, code string) {
	t.Helper()
	s, err := registry.Open(store)
	require.NoError(t, err)
	rec, err := s.Role(role)
	require.NoError(t, err)
	_, err = s.Update(role, method, func(a *registry.Artifact, _ bool) error {
		a.Promote(code, "initial_forge", "test", "v1", time.Now())
		a.ContractFingerprint = rec.Fingerprint
		return nil
	})
	require.NoError(t, err)
}

// TestBinDamagedRoleFileLosesNothing (issue 9, item 11): a damaged role file is quarantined and
// the role restored from its last-good copy on the first read; every command still sees every
// role; doctor exits 1 and says what was restored until `quarantine restore` deals with it.
func TestBinDamagedRoleFileLosesNothing(t *testing.T) {
	store := t.TempDir()
	require.Equal(t, 0, bin(t, nil, nil, storeArgs(store, "role", "add", "--role", "units", "--purpose", "unit conversion")...).code)
	require.Equal(t, 0, bin(t, nil, nil, storeArgs(store, "role", "add", "--role", "text", "--purpose", "string tools")...).code)
	require.NoError(t, os.WriteFile(filepath.Join(store, "roles", "units.json"), []byte(`{"schema_version":1,"role":"un`), 0o644))

	r := bin(t, nil, nil, storeArgs(store, "role", "ls")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "units")
	assert.Contains(t, r.stdout, "text")
	assert.Contains(t, r.stderr, "quarantined damaged file")
	assert.Contains(t, r.stderr, "restored from its last-good copy")

	r = bin(t, nil, nil, storeArgs(store, "doctor")...)
	assert.Equal(t, 1, r.code, "a quarantine made by an earlier command is damage doctor reports")
	assert.Contains(t, r.stdout, "role units")
	assert.Contains(t, r.stdout, "restored: role units restored from its last-good copy")

	r = bin(t, nil, nil, storeArgs(store, "--json", "doctor")...)
	assert.Equal(t, 1, r.code)
	doc := oneJSONDoc(t, r.stdout)
	assert.Equal(t, false, doc["ok"])
	assert.Len(t, doc["pending"], 1)

	r = bin(t, nil, nil, storeArgs(store, "--json", "quarantine", "ls")...)
	require.Equal(t, 0, r.code)
	var q []registry.QuarantineReport
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &q), r.stdout)
	require.Len(t, q, 1)
	assert.Equal(t, "role", q[0].Kind)
	assert.Contains(t, q[0].Reason, "does not parse")

	r = bin(t, nil, nil, storeArgs(store, "quarantine", "restore", q[0].ID)...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "kept")
	r = bin(t, nil, nil, storeArgs(store, "doctor")...)
	assert.Equal(t, 0, r.code, r.stdout+r.stderr)
	r = bin(t, nil, nil, storeArgs(store, "role", "show", "units")...)
	require.Equal(t, 0, r.code)
	assert.Contains(t, r.stdout, "unit conversion")
}

// TestBinOlderStore (item 11): an older store's registry.json is migrated losslessly on open; a
// damaged one is no longer silent — doctor exits 1 and names it.
func TestBinOlderStore(t *testing.T) {
	c := registry.Contract{Role: "units", Purpose: "unit conversion"}
	legacy, err := json.Marshal(map[string]any{"schema_version": 1, "roles": map[string]any{
		"units": registry.RoleRecord{Contract: c, Fingerprint: c.Fingerprint(), UsageCount: 7}}})
	require.NoError(t, err)
	store := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(store, "registry.json"), legacy, 0o644))
	r := bin(t, nil, nil, storeArgs(store, "--json", "role", "ls")...)
	require.Equal(t, 0, r.code, r.stderr)
	var roles []registry.RoleRecord
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &roles))
	require.Len(t, roles, 1)
	assert.Equal(t, int64(7), roles[0].UsageCount)
	assert.Equal(t, c.Fingerprint(), roles[0].Fingerprint)
	assert.Equal(t, 0, bin(t, nil, nil, storeArgs(store, "doctor")...).code)

	damaged := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(damaged, "registry.json"), legacy[:len(legacy)/2], 0o644))
	r = bin(t, nil, nil, storeArgs(damaged, "role", "ls")...)
	assert.Contains(t, r.stderr, "quarantined damaged file")
	r = bin(t, nil, nil, storeArgs(damaged, "doctor")...)
	assert.Equal(t, 1, r.code, "the quarantine made while opening the store is reported")
	assert.Contains(t, r.stdout, "registry.json")
}

// TestBinHandEditedArtifact (item 12): a hand-edited artifact is listed as quarantined with the
// reason, history says so, and restore takes the edit over; doctor is 1 until then, 0 after.
func TestBinHandEditedArtifact(t *testing.T) {
	store := t.TempDir()
	require.Equal(t, 0, bin(t, nil, nil, storeArgs(store, "role", "add", "--role", "text", "--purpose", "string tools")...).code)
	putArtifact(t, store, "text", "upper", "package artifact\n\nimport \"strings\"\n\nfunc Upper(s string) string { return strings.ToUpper(s) }\n")
	p := filepath.Join(store, "tools", "text", "upper.json")
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, bytes.Replace(b, []byte("strings.ToUpper(s)"), []byte("strings.ToUpper(s) + \\\"!\\\""), 1), 0o644))

	r := bin(t, nil, nil, storeArgs(store, "ls")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "QUARANTINED")
	assert.Contains(t, r.stdout, "code does not match code_checksum")
	r = bin(t, nil, nil, storeArgs(store, "--json", "ls")...)
	var rows []artifactRow
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rows))
	require.Len(t, rows, 1, "listed, not vanished")
	require.NotNil(t, rows[0].Quarantine)
	id := rows[0].Quarantine.ID

	r = bin(t, nil, nil, storeArgs(store, "history", "text", "upper")...)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "quarantined")
	assert.Contains(t, r.stderr, "forge quarantine restore "+id)
	assert.Equal(t, 1, bin(t, nil, nil, storeArgs(store, "doctor")...).code)

	r = bin(t, nil, nil, storeArgs(store, "quarantine", "restore", id)...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "accepted")
	r = bin(t, nil, nil, storeArgs(store, "history", "text", "upper")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "operator:restore")
	r = bin(t, nil, nil, storeArgs(store, "call", "text", "upper", "s=hi")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "\"HI!\"\n", r.stdout, "the operator's edit runs")
	assert.Equal(t, 0, bin(t, nil, nil, storeArgs(store, "doctor")...).code)
}

// TestBinRoleAddNamesStaleArtifacts (item 13).
func TestBinRoleAddNamesStaleArtifacts(t *testing.T) {
	store := t.TempDir()
	require.Equal(t, 0, bin(t, nil, nil, storeArgs(store, "role", "add", "--role", "text", "--purpose", "string tools")...).code)
	putArtifact(t, store, "text", "upper", "package artifact\nfunc Upper(s string) string { return s }\n")
	putArtifact(t, store, "text", "lower", "package artifact\nfunc Lower(s string) string { return s }\n")

	r := bin(t, nil, nil, storeArgs(store, "role", "add", "--role", "text", "--purpose", "string tools")...)
	require.Equal(t, 0, r.code)
	assert.NotContains(t, r.stdout, "stale", "same contract: nothing is stale")

	r = bin(t, nil, nil, storeArgs(store, "role", "add", "--role", "text", "--purpose", "string tools, changed")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "2 artifact(s) are stale")
	assert.Contains(t, r.stdout, "text.upper")
	assert.Contains(t, r.stdout, "text.lower")

	r = bin(t, nil, nil, storeArgs(store, "--json", "role", "add", "--role", "text", "--purpose", "changed again")...)
	require.Equal(t, 0, r.code)
	var out struct {
		Role  string                `json:"role"`
		Stale []forge.StaleArtifact `json:"stale_artifacts"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), r.stdout)
	assert.Equal(t, "text", out.Role)
	assert.Len(t, out.Stale, 2)
}

// TestBinVersion (item 14).
func TestBinVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		r := bin(t, nil, nil, args...)
		require.Equal(t, 0, r.code, r.stderr)
		assert.True(t, strings.HasPrefix(r.stdout, "forge "), r.stdout)
		assert.Contains(t, r.stdout, runtime.Version())
	}
	r := bin(t, nil, nil, "--json", "version")
	require.Equal(t, 0, r.code)
	var v versionInfo
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &v))
	assert.Equal(t, "github.com/artifactforge/forge", v.Module)
	assert.Equal(t, runtime.Version(), v.GoVersion)
	assert.NotEmpty(t, v.Version)
}

// oneJSONDoc asserts that out is exactly one JSON document and returns it.
func oneJSONDoc(t *testing.T, out string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	var doc any
	require.NoError(t, dec.Decode(&doc), "stdout is not JSON: %q", out)
	var extra any
	assert.ErrorIs(t, dec.Decode(&extra), io.EOF, "stdout holds more than one JSON document: %q", out)
	m, _ := doc.(map[string]any)
	return m
}

// TestBinJSONEverywhere (item 15): with --json every command, errors included, writes one JSON
// document to stdout.
func TestBinJSONEverywhere(t *testing.T) {
	store := t.TempDir()
	require.Equal(t, 0, bin(t, nil, nil, storeArgs(store, "role", "add", "--role", "text", "--purpose", "p", "--json")...).code)
	putArtifact(t, store, "text", "upper", "package artifact\nfunc Upper(s string) string { return s }\n")
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"frobnicate"}, 2},
		{[]string{"ls", "--frob"}, 2},
		{[]string{"role", "show", "nope"}, 1},
		{[]string{"regen", "units", "../x"}, 2},
		{[]string{"regen", "text", "upper"}, 1}, // no provider
		{[]string{"show", "text", "nope"}, 1},
		{[]string{"call", "text", "upper", "s=a", "s=b"}, 2},
		{[]string{"quarantine", "restore", "nothing-here"}, 1},
		{[]string{"bless", "text", "lower"}, 1},
	} {
		r := bin(t, nil, nil, storeArgs(store, append([]string{"--json"}, tc.args...)...)...)
		assert.Equal(t, tc.code, r.code, "%v: %s", tc.args, r.stderr)
		doc := oneJSONDoc(t, r.stdout)
		assert.Equal(t, false, doc["ok"], "%v", tc.args)
		require.NotNil(t, doc["error"], "%v: %s", tc.args, r.stdout)
	}
	r := bin(t, nil, nil, storeArgs(store, "--json", "regen", "text", "upper", "--next-call")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, true, oneJSONDoc(t, r.stdout)["ok"])
	r = bin(t, nil, nil, storeArgs(store, "--json", "doctor")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, true, oneJSONDoc(t, r.stdout)["ok"])
}

// TestBinArgsFromFileAndStdin (item 16).
func TestBinArgsFromFileAndStdin(t *testing.T) {
	store := t.TempDir()
	cas := filepath.Join(t.TempDir(), "cassette.jsonl")
	require.NoError(t, os.WriteFile(cas, []byte(upperCassette), 0o644))
	require.Equal(t, 0, bin(t, nil, nil, storeArgs(store, "role", "add", "--role", "text", "--purpose", "string utilities")...).code)
	argsFile := filepath.Join(t.TempDir(), "args.json")
	require.NoError(t, os.WriteFile(argsFile, []byte(`{"s":"from file"}`), 0o644))

	r := bin(t, nil, nil, storeArgs(store, "call", "text", "upper", "--args", "@"+argsFile, "--provider", "replay:"+cas)...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "\"FROM FILE\"\n", r.stdout)
	r = bin(t, strings.NewReader(`{"s":"from stdin"}`), nil, storeArgs(store, "call", "text", "upper", "--args", "-")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "\"FROM STDIN\"\n", r.stdout)

	r = bin(t, nil, nil, storeArgs(store, "call", "text", "upper", "s=a", "s=b")...)
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "given twice")
	r = bin(t, nil, nil, storeArgs(store, "call", "text", "upper", "s=caf\xe9")...)
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "not valid UTF-8")
	require.NoError(t, os.WriteFile(argsFile, []byte("{\"s\":\"caf\xe9\"}"), 0o644))
	r = bin(t, nil, nil, storeArgs(store, "call", "text", "upper", "--args", "@"+argsFile)...)
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "not valid UTF-8")

	contract := filepath.Join(t.TempDir(), "c.json")
	require.NoError(t, os.WriteFile(contract, []byte("{\"role\":\"latin\",\"purpose\":\"caf\xe9\"}"), 0o644))
	r = bin(t, nil, nil, storeArgs(store, "role", "add", "-f", contract)...)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "not valid UTF-8")
	r = bin(t, nil, nil, storeArgs(store, "role", "add", "--role", "latin", "--purpose", "caf\xe9")...)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "not valid UTF-8")
}

// TestBinUsageAndStoreErrors (item 17).
func TestBinUsageAndStoreErrors(t *testing.T) {
	store := t.TempDir()
	require.Equal(t, 0, bin(t, nil, nil, storeArgs(store, "role", "add", "--role", "units", "--purpose", "p")...).code)
	c := `{"role":"text","purpose":"p","methods":{"upper":"func Upper(s string) string"}}`
	require.Equal(t, 0, bin(t, strings.NewReader(c), nil, storeArgs(store, "role", "add", "-f", "-")...).code)

	r := bin(t, nil, nil, storeArgs(store, "regen", "units", "../x")...)
	assert.Equal(t, 2, r.code, r.stderr)
	assert.Contains(t, r.stderr, "method name")
	assert.NotContains(t, r.stderr, "extrinsic")

	r = bin(t, nil, nil, storeArgs(store, "bless", "units", "nope")...)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "forge: units.nope")

	r = bin(t, nil, nil, storeArgs(store, "show", "text", "lower")...)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, `role text declares no method lower (it declares upper)`, "the call's own words (forge.LoadArtifact)")
	r = bin(t, nil, nil, storeArgs(store, "show", "ghost", "m")...)
	assert.Contains(t, r.stderr, `role "ghost" is not in the store`)

	missing := filepath.Join(t.TempDir(), "no", "store")
	for _, args := range [][]string{{"ls"}, {"role", "ls"}, {"show", "a", "b"}, {"history", "a", "b"}, {"doctor"}, {"quarantine", "ls"}, {"stale"}} {
		r := bin(t, nil, nil, storeArgs(missing, args...)...)
		assert.Equal(t, 1, r.code, "%v", args)
		assert.Contains(t, r.stderr, "no store", "%v", args)
		assert.NoDirExists(t, missing, "%v: a read-only command creates nothing", args)
	}

	// The operator verb on a role named like a subcommand, after --.
	r = bin(t, nil, nil, storeArgs(store, "quarantine", "--", "ls", "m")...)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "ls.m")
}

// TestBinReadOnlyStore (item 17): a store this process cannot write fails with advice.
func TestBinReadOnlyStore(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes through file permissions; registry.TestWriteErrAdvice covers the message")
	}
	store := t.TempDir()
	require.Equal(t, 0, bin(t, nil, nil, storeArgs(store, "role", "add", "--role", "units", "--purpose", "p")...).code)
	require.NoError(t, os.Chmod(filepath.Join(store, "roles"), 0o555))
	defer os.Chmod(filepath.Join(store, "roles"), 0o755)
	r := bin(t, nil, nil, storeArgs(store, "role", "add", "--role", "units", "--purpose", "q")...)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "read-only for this process")
}

// TestREADMEPathsExist (item 19): every repository path the README names exists.
func TestREADMEPathsExist(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	paths := regexp.MustCompile(`(?:examples|cmd|fixtures|sandbox|provider|registry|forge)/[A-Za-z0-9_./-]*[A-Za-z0-9_]`).FindAllString(string(readme), -1)
	require.NotEmpty(t, paths)
	for _, p := range paths {
		if strings.Contains(p, "forge.jsonl") || strings.HasPrefix(p, "forge/") && !strings.HasSuffix(p, ".go") {
			continue // the store's events/forge.jsonl; "forge/host" and the like are import paths
		}
		_, err := os.Stat(filepath.Join("../..", p))
		assert.NoError(t, err, "README names %s", p)
	}
	// A file a command reads with @FILE (curl -d @words.json, --args @FILE) is run from the
	// repository root like the rest: `-d @words.json` named a file only the README's text held.
	files := regexp.MustCompile(`(?m)^(?:\$ |    ).*?(?:-d|--args) @([A-Za-z0-9_./-]+)`).FindAllStringSubmatch(string(readme), -1)
	require.NotEmpty(t, files)
	for _, m := range files {
		_, err := os.Stat(filepath.Join("../..", m[1]))
		assert.NoError(t, err, "a README command reads @%s: give the file in the repository and its path from the root", m[1])
	}
}

// TestBinREADMECalling (item 19): the README's calling example, as written, from the repository root.
func TestBinREADMECalling(t *testing.T) {
	path, err := forgeBinary()
	require.NoError(t, err)
	store := t.TempDir()
	run := func(stdin string, args ...string) binResult {
		cmd := exec.Command(path, append([]string{"--store", store}, args...)...)
		cmd.Dir = "../.."
		cmd.Env = append(os.Environ(), "FORGE_PROVIDER=", "FORGE_SANDBOX=yaegi")
		cmd.Stdin = strings.NewReader(stdin)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		return binResult{code, out.String(), errb.String()}
	}
	r := run("", "role", "add", "-f", "examples/contracts/text.json")
	require.Equal(t, 0, r.code, r.stderr)
	r = run("", "call", "text", "upper", "s=hello", "--provider", "replay:cmd/forge/demo/cassette.jsonl")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "\"HELLO\"\n", r.stdout)
	r = run("", "call", "text", "upper", "--args", "@examples/args.json")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "\"FROM A FILE\"\n", r.stdout)
	r = run(`{"s":"piped"}`, "call", "text", "upper", "--args", "-")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "\"PIPED\"\n", r.stdout)
}
