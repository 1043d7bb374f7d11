package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func runSandboxCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return out.String(), errb.String(), code
}

func writeTempFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

func TestRunCommand(t *testing.T) {
	add := writeTempFile(t, "add.go", "package artifact\n\nfunc Add(a, b int) int { return a + b }\n")
	out, _, code := runSandboxCLI(t, "run", add, "--args", "[1, 2]")
	assert.Equal(t, 0, code)
	assert.Equal(t, "3\n", out)

	out, _, code = runSandboxCLI(t, "run", add, "--args", `{"a": 40, "b": 2}`, "--json")
	assert.Equal(t, 0, code)
	var res runResult
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	assert.True(t, res.OK)
	assert.Equal(t, "Add", res.Func)
	assert.JSONEq(t, "42", string(res.Value))

	_, errOut, code := runSandboxCLI(t, "run", add, "--args", `{"a": "x", "b": 2}`)
	assert.Equal(t, exitFailed, code)
	assert.Contains(t, errOut, "sandbox: args: param a")

	_, _, code = runSandboxCLI(t, "run", add, "--args", `[1,`)
	assert.Equal(t, exitUsage, code)

	_, _, code = runSandboxCLI(t, "run", add, "--sandbox", "nope")
	assert.Equal(t, exitUsage, code)

	if !raceEnabled { // a deadline-stopped run trips yaegi v0.16.1's upstream data race
		spin := writeTempFile(t, "spin.go", "package artifact\n\nfunc Spin() int {\n\tfor {\n\t}\n}\n")
		out, _, code = runSandboxCLI(t, "run", spin, "--timeout", "100ms", "--json")
		assert.Equal(t, exitFailed, code)
		require.NoError(t, json.Unmarshal([]byte(out), &res))
		assert.False(t, res.OK)
		require.NotNil(t, res.Error)
		assert.Equal(t, "deadline", string(res.Error.Kind))
	}

	fetch := writeTempFile(t, "fetch.go", "package artifact\n\nimport \"forge/host\"\n\nfunc Fetch() (string, error) { return host.Get(\"http://127.0.0.1:1/\") }\n")
	_, errOut, code = runSandboxCLI(t, "run", fetch)
	assert.Equal(t, exitFailed, code)
	assert.Contains(t, errOut, "policy")
	assert.Contains(t, errOut, "--allow-http")
}

func TestTestCommand(t *testing.T) {
	art := writeTempFile(t, "add.go", "func Add(a, b int) int { return a + b }\n")
	tests := writeTempFile(t, "add_test.go", `package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAdd(t *testing.T) { assert.Equal(t, 3, Add(1, 2)) }

func TestWrong(t *testing.T) { assert.Equal(t, 5, Add(1, 2), "deliberately wrong") }
`)
	out, _, code := runSandboxCLI(t, "test", art, tests)
	assert.Equal(t, exitFailed, code)
	assert.Contains(t, out, "--- PASS: TestAdd")
	assert.Contains(t, out, "--- FAIL: TestWrong")
	assert.Contains(t, out, "deliberately wrong")
	assert.Contains(t, out, "1 passed, 1 failed\n")
	assert.Regexp(t, `1 passed, 1 failed\n$`, out)

	out, _, code = runSandboxCLI(t, "test", art, tests, "--json")
	assert.Equal(t, exitFailed, code)
	var rep testReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, 1, rep.Passed)
	assert.Equal(t, 1, rep.Failed)

	good := writeTempFile(t, "good_test.go", "package main\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 2) != 4 {\n\t\tt.Fatal(\"math\")\n\t}\n}\n")
	out, _, code = runSandboxCLI(t, "test", art, good)
	assert.Equal(t, 0, code)
	assert.Regexp(t, `1 passed, 0 failed\n$`, out)
}
