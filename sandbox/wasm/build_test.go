package wasm

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/internal/guestgen"
)

func TestNoToolchain(t *testing.T) {
	_, err := guestgen.FirstToolchain([]string{"/nonexistent/bin/go"})
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrNoToolchain))
	assert.Equal(t, sandbox.KindInternal, sandbox.KindOf(err))
	assert.Contains(t, err.Error(), "FORGE_GO")
	assert.Contains(t, err.Error(), "/nonexistent/bin/go")

	sb, err := New(Options{CacheDir: t.TempDir(), GoBin: "/nonexistent/bin/go"})
	require.NoError(t, err)
	defer sb.Close()
	sb.builder.once.Do(func() { sb.builder.tc, sb.builder.tcErr = guestgen.FirstToolchain([]string{"/nonexistent/bin/go"}) })
	_, err = sb.Compile(context.Background(), sandbox.Source{Code: benchCode})
	assert.ErrorIs(t, err, ErrNoToolchain)
}

// TestConcurrentCompileSharesBuild compiles one artifact, absent from the module cache, from
// several goroutines at once: exactly one go build runs and everyone gets a working program.
func TestConcurrentCompileSharesBuild(t *testing.T) {
	sb, err := New(Options{CacheDir: testCacheDir})
	require.NoError(t, err)
	defer sb.Close()
	src := sandbox.Source{Code: "package artifact\n\nfunc Twice(s string) string { return s + s }\n"}
	code, _, err := gateCode(src.Code, false, nil)
	require.NoError(t, err)
	sig, err := sandbox.ParseSignature(sandbox.Source{Code: code})
	require.NoError(t, err)
	tc, err := sb.builder.toolchain()
	require.NoError(t, err)
	cached := sb.builder.modulePath(callGuest(code, sig).key(tc.Version))
	removeIfExists(t, cached) // "remove the module so that it must be built; wazero's compile cache still hits")
	var wg sync.WaitGroup
	progs := make([]sandbox.Program, 4)
	errs := make([]error, 4)
	for i := range progs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			progs[i], errs[i] = sb.Compile(context.Background(), src)
		}()
	}
	wg.Wait()
	for i := range progs {
		require.NoError(t, errs[i])
		out, err := sb.Run(context.Background(), progs[i], sandbox.Input{Args: []byte(`{"s": "ab"}`)})
		require.NoError(t, err)
		assert.JSONEq(t, `"abab"`, string(out.Value))
	}
	assert.Equal(t, int64(1), sb.builder.builds.Load(), "one go build for one checksum")
}

func TestCompileErrors(t *testing.T) {
	for _, c := range []struct {
		name, code string
		kind       sandbox.Kind
		line       int
	}{
		{"type error", "package artifact\n\nfunc F() int {\n\treturn \"x\"\n}\n", sandbox.KindCompile, 4},
		{"undefined", "package artifact\n\nfunc F() int {\n\treturn g()\n}\n", sandbox.KindCompile, 4},
		{"policy", "package artifact\n\nimport \"os\"\n\nfunc F() int { return len(os.Args) }\n", sandbox.KindPolicy, 3},
		{"init panics", "package artifact\n\nvar x = []int{}[1]\n\nfunc F() int { return x }\n", sandbox.KindPanic, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := shared.Compile(context.Background(), sandbox.Source{Code: c.code})
			require.Error(t, err)
			var se *sandbox.Error
			require.ErrorAs(t, err, &se)
			assert.Equal(t, c.kind, se.Kind, se.Error())
			if c.line > 0 {
				assert.Equal(t, c.line, se.Line, se.Error())
			}
		})
	}
}

func removeIfExists(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
}
