package main

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
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
