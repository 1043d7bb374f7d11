package main

import (
	"bytes"
	"errors"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunMemoryFlagIsBounded: --memory is read by the module's one size parser; 0 and sizes that
// overflow (9999999999G wrapped around to a negative size) are usage errors, before any run.
func TestRunMemoryFlagIsBounded(t *testing.T) {
	add := writeTempFile(t, "add.go", "package artifact\n\nfunc Add(a, b int) int { return a + b }\n")
	for _, bad := range []string{"9999999999G", "0", "-1MB", "99999999999999999999"} {
		_, errOut, code := runSandboxCLI(t, "run", add, "--args", "[1, 2]", "--memory", bad)
		assert.Equal(t, exitUsage, code, "--memory %s: %s", bad, errOut)
		assert.Contains(t, errOut, "--memory", bad)
	}
	out, _, code := runSandboxCLI(t, "run", add, "--args", "[1, 2]", "--memory", "64MiB")
	assert.Equal(t, 0, code)
	assert.Equal(t, "3\n", out)
}

// TestCLIDoesNotImportTestPackages: the command's code takes nothing from a test helper package
// of this module (the size parser once came from sandbox/sandboxtest).
func TestCLIDoesNotImportTestPackages(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		require.NoError(t, err)
		f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.ImportsOnly)
		require.NoError(t, err)
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			own := strings.HasPrefix(path, "github.com/artifactforge/forge/")
			assert.False(t, own && (strings.HasSuffix(path, "test") || strings.Contains(path, "test/")), "%s imports the test package %s", name, path)
		}
	}
}

// TestREADMERoleCheck runs the README's `forge role check` examples as written, from the
// repository root, and compares their output with the README's; `role add --dry-run -f` is the
// same check and says the same.
func TestREADMERoleCheck(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	type example struct {
		args []string
		want []string
	}
	var examples []example
	for _, line := range strings.Split(string(readme), "\n") {
		switch {
		case strings.HasPrefix(line, "    $ forge role check "):
			examples = append(examples, example{args: strings.Fields(strings.TrimPrefix(line, "    $ forge "))})
		case len(examples) > 0 && examples[len(examples)-1].want != nil && !strings.HasPrefix(line, "    "):
			examples[len(examples)-1].want = append(examples[len(examples)-1].want, "\x00") // the block ended
		case len(examples) > 0 && strings.HasPrefix(line, "    ") && !strings.HasPrefix(line, "    $ "):
			e := &examples[len(examples)-1]
			if len(e.want) == 0 || e.want[len(e.want)-1] != "\x00" {
				e.want = append(e.want, strings.TrimPrefix(line, "    "))
			}
		}
	}
	require.Len(t, examples, 2, "the README shows a contract with problems and one without")
	path, err := forgeBinary()
	require.NoError(t, err)
	run := func(args ...string) binResult {
		cmd := exec.Command(path, append([]string{"--store", t.TempDir()}, args...)...)
		cmd.Dir = "../.."
		cmd.Env = append(os.Environ(), "FORGE_MAX_MEMORY=", "FORGE_MAX_TIMEOUT=", "FORGE_MAX_OUTPUT=")
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
	for _, e := range examples {
		want := strings.Join(slices.DeleteFunc(e.want, func(s string) bool { return s == "\x00" }), "\n") + "\n"
		r := run(e.args...)
		assert.Equal(t, want, r.stdout, "forge %s", strings.Join(e.args, " "))
		wantCode := 0
		if strings.Contains(want, "problem(s)") {
			wantCode = exitFailed
			assert.Contains(t, r.stderr, "fix the contract")
		}
		assert.Equal(t, wantCode, r.code, "forge %s: %s", strings.Join(e.args, " "), r.stderr)

		file := e.args[len(e.args)-1]
		dry := run("role", "add", "--dry-run", "-f", file)
		assert.Equal(t, want, dry.stdout, "role add --dry-run -f %s", file)
		assert.Equal(t, wantCode, dry.code)
		ls := run("role", "ls", "--json")
		assert.Equal(t, "[]\n", ls.stdout, "nothing was written")
	}
}

// TestRoleAddRefusesEveryProblem: role add names every problem of a contract and writes nothing;
// a fixed contract is then added.
func TestRoleAddRefusesEveryProblem(t *testing.T) {
	store := t.TempDir()
	bad := writeTempFile(t, "bad.json", `{"role":"words","purpose":"count words","methods":{"wordcount":"func WordCount(s string) int"},
		"limits":{"memory":"1048576MB","timeout":"24h","output":"1048576MB"}}`)
	code, out, errOut := runCLI(t, "--store", store, "role", "add", "-f", bad)
	assert.Equal(t, exitFailed, code, out)
	for _, want := range []string{"has 4 problems", "declares func WordCount", `name the method "word_count"`,
		"maximum of 1GiB (FORGE_MAX_MEMORY)", "maximum of 1m0s (FORGE_MAX_TIMEOUT)", "maximum of 64MiB (FORGE_MAX_OUTPUT)",
		"fix the contract and run `forge role add -f " + bad + "` again"} {
		assert.Contains(t, errOut, want)
	}
	code, out, _ = runCLI(t, "--store", store, "role", "ls", "--json")
	require.Equal(t, 0, code)
	assert.Equal(t, "[]\n", out)

	t.Setenv("FORGE_MAX_MEMORY", "2TiB")
	code, _, errOut = runCLI(t, "--store", store, "role", "check", bad)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "FORGE_MAX_MEMORY")
	t.Setenv("FORGE_MAX_MEMORY", "")

	good := writeTempFile(t, "good.json", `{"role":"words","purpose":"count words","methods":{"word_count":"func WordCount(s string) int"},"limits":{"memory":"512MiB"}}`)
	code, out, errOut = runCLI(t, "--store", store, "role", "add", "--dry-run", "-f", good)
	assert.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "valid contract; nothing was written")
	code, out, _ = runCLI(t, "--store", store, "--json", "role", "check", good)
	assert.Equal(t, 0, code)
	assert.JSONEq(t, `{"ok":true,"role":"words","problems":[],"maxima":{"memory_bytes":1073741824,"timeout":"1m0s","output_bytes":67108864}}`, out)
	code, _, errOut = runCLI(t, "--store", store, "role", "add", "-f", good)
	assert.Equal(t, 0, code, errOut)
}
