package guestgen

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/gate"
)

// TestRootVersion: the toolchain's version comes from GOROOT/VERSION when the go command sits in
// a GOROOT, agrees with `go env GOVERSION` for the real toolchain, and is asked of the command
// otherwise.
func TestRootVersion(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	cmd := exec.Command(gobin, "env", "GOVERSION")
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local")
	out, err := cmd.Output()
	require.NoError(t, err)
	if v, ok := rootVersion(gobin); ok {
		assert.Equal(t, strings.TrimSpace(string(out)), v)
	}

	root := t.TempDir()
	bin := filepath.Join(root, "bin", "go")
	require.NoError(t, os.MkdirAll(filepath.Dir(bin), 0o755))
	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\necho go1.99.0\n"), 0o755))
	_, ok := rootVersion(bin)
	assert.False(t, ok, "no VERSION file")
	require.NoError(t, os.WriteFile(filepath.Join(root, "VERSION"), []byte("go1.30.1\ntime 2027-02-01T00:00:00Z\n"), 0o644))
	v, ok := rootVersion(bin)
	assert.True(t, ok)
	assert.Equal(t, "go1.30.1", v)
	link := filepath.Join(t.TempDir(), "go")
	require.NoError(t, os.Symlink(bin, link))
	v, ok = rootVersion(link)
	assert.True(t, ok, "a symlink to GOROOT/bin/go")
	assert.Equal(t, "go1.30.1", v)

	require.NoError(t, os.WriteFile(filepath.Join(root, "VERSION"), []byte("devel +abc\n"), 0o644))
	_, ok = rootVersion(bin)
	assert.False(t, ok, "not a release version: ask the command")
	shim := filepath.Join(t.TempDir(), "shims", "go")
	require.NoError(t, os.MkdirAll(filepath.Dir(shim), 0o755))
	require.NoError(t, os.WriteFile(shim, []byte("#!/bin/sh\n"), 0o755))
	_, ok = rootVersion(shim)
	assert.False(t, ok, "outside a GOROOT")
}

// TestHostShimMatchesYaegi: forge/host inside guest modules exports exactly gate.HostAPI, as the yaegi
// backend's forge/host does, so code written for one runs under the other.
func TestHostShimMatchesYaegi(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "host.go", HostAPISource, parser.SkipObjectResolution)
	require.NoError(t, err)
	var names []string
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil && d.Name.IsExported() {
				names = append(names, d.Name.Name)
			}
		case *ast.GenDecl:
			for _, sp := range d.Specs {
				if ts, ok := sp.(*ast.TypeSpec); ok && ts.Name.IsExported() {
					names = append(names, ts.Name.Name)
				}
			}
		}
	}
	assert.ElementsMatch(t, gate.HostAPI(), names)
}

// TestValidResult holds the fast path of result validation equal to encoding/json.
func TestValidResult(t *testing.T) {
	inputs := []string{"", "0", "-0", "01", "-", "--1", "12", "-12", "1.5", "1e3", "9999999999999999999999", "true", "false",
		"null", "nul", "tru", `"`, `""`, `"a"`, `"a`, `a"`, `"\"`, `"\n"`, `"é"`, "\"\x01\"", `"<&>"`, `{"a":1}`, `[1,2]`, `[1,`, " 1", "1 ", "{not json"}
	for i := range 256 {
		inputs = append(inputs, `"`+string(rune(i))+`"`, string([]byte{'"', byte(i), '"'}), string([]byte{'1', byte(i)}))
	}
	for _, in := range inputs {
		assert.Equal(t, json.Valid([]byte(in)), validResult([]byte(in)), "%q", in)
	}
}

// TestCrashError classifies the Go runtime's reports of a guest that stopped.
func TestCrashError(t *testing.T) {
	for _, c := range []struct {
		stderr string
		want   sandbox.Kind
	}{
		{"runtime: goroutine stack exceeds 1000000-byte limit\nfatal error: stack overflow", sandbox.KindDepth},
		{"fatal error: runtime: out of memory", sandbox.KindMemory},
		{"fatal error: runtime: cannot allocate memory", sandbox.KindMemory},
		{"fatal error: all goroutines are asleep - deadlock!", sandbox.KindDeadline},
	} {
		e := CrashError(c.stderr, nil)
		require.NotNil(t, e, c.stderr)
		assert.Equal(t, c.want, e.Kind, c.stderr)
	}
	assert.Nil(t, CrashError("panic: boom\n\ngoroutine 1 [running]:", nil))
	assert.Equal(t, "panic: boom", CrashReport("panic: boom\n\ngoroutine 1 [running]:\nmain.main()"))
}
