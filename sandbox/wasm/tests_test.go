package wasm

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/sandbox"
)

const fibArtifact = `package artifact

func Fib(n int) int {
	if n < 2 {
		return n
	}
	return Fib(n-1) + Fib(n-2)
}
`

// TestSlowInInterpreterRerunsCompiled: a test that is quick in compiled code but outlasts its
// deadline in the interpreter must pass, because Test reruns it compiled. fib(33) takes about
// 0.3 s compiled and about 5 s interpreted here; the batch's deadline (1 s per test, 2 s for the
// two) sits between the two with a margin of 2.5x or more on each side. (fib(31) with 1.2 s per
// test stopped working once the guest's GC got a real monotonic clock: interpreted, it now ends
// in about 2 s, inside the batch's 2.4 s.)
func TestSlowInInterpreterRerunsCompiled(t *testing.T) {
	const tests = `package artifact

import "testing"

func TestQuick(t *testing.T) {
	if Fib(10) != 55 {
		t.Fatal("fib(10)")
	}
}

func TestHeavy(t *testing.T) {
	if got := Fib(33); got != 3524578 {
		t.Fatalf("fib(33) = %d", got)
	}
}
`
	sb, err := New(Options{CacheDir: testCacheDir})
	require.NoError(t, err)
	defer sb.Close()
	in := sandbox.Input{Limits: sandbox.Limits{Timeout: time.Second}}
	start := time.Now()
	res, err := sb.Test(context.Background(), sandbox.Source{Code: fibArtifact}, tests, in)
	require.NoError(t, err)
	t.Logf("Test: %v", time.Since(start))
	require.Len(t, res, 2)
	for _, r := range res {
		assert.True(t, r.Passed, "%s: %s", r.Name, r.Message)
	}
	assert.Equal(t, int64(1), sb.reruns.Load(), "TestHeavy ran out of time interpreted and was rerun compiled")
}

// TestEndlessTestFailsWithDeadline: a test that never ends fails with the deadline in compiled code
// too, and the tests around it still run.
func TestEndlessTestFailsWithDeadline(t *testing.T) {
	const tests = `package artifact

import "testing"

func TestA(t *testing.T) {
	if Fib(5) != 5 {
		t.Fatal("fib(5)")
	}
}

func TestLoop(t *testing.T) {
	for Fib(1) == 1 {
	}
}

func TestB(t *testing.T) {
	if Fib(6) != 8 {
		t.Fatal("fib(6)")
	}
}
`
	in := sandbox.Input{Limits: sandbox.Limits{Timeout: 300 * time.Millisecond}}
	res, err := shared.Test(context.Background(), sandbox.Source{Code: fibArtifact}, tests, in)
	require.NoError(t, err)
	require.Len(t, res, 3)
	assert.True(t, res[0].Passed, res[0].Message)
	assert.False(t, res[1].Passed)
	assert.Contains(t, res[1].Message, "deadline")
	assert.True(t, res[2].Passed, res[2].Message)
}

// TestDeepRecursionInTestRerunsCompiled: recursion 9,500 deep is within the depth cap (10,000) but
// beyond the interpreter's 2,000-frame call stack; the test passes, run again compiled, and
// recursion past the cap still fails as a depth error.
func TestDeepRecursionInTestRerunsCompiled(t *testing.T) {
	const art = `package artifact

func Depth(n int) int {
	if n == 0 {
		return 0
	}
	return 1 + Depth(n-1)
}
`
	const tests = `package artifact

import "testing"

func TestDeep(t *testing.T) {
	if got := Depth(9500); got != 9500 {
		t.Fatalf("Depth(9500) = %d", got)
	}
}

func TestUnbounded(t *testing.T) {
	Depth(1 << 30)
}
`
	sb, err := New(Options{CacheDir: testCacheDir})
	require.NoError(t, err)
	defer sb.Close()
	res, err := sb.Test(context.Background(), sandbox.Source{Code: art}, tests, sandbox.Input{})
	require.NoError(t, err)
	require.Len(t, res, 2)
	assert.True(t, res[0].Passed, res[0].Message)
	assert.False(t, res[1].Passed)
	assert.Contains(t, res[1].Message, "depth")
	assert.Equal(t, int64(2), sb.reruns.Load(), "both stopped at the interpreter's call stack and ran again compiled")
}

// TestTestModuleLinksNoNetHTTP: a test module that uses assert and require links testify without
// its HTTP assertions (which the gate refuses), so net/http and its tree are not compiled,
// linked, instrumented and initialized at every Test. The test's assertions still run.
func TestTestModuleLinksNoNetHTTP(t *testing.T) {
	tc, err := shared.builder.toolchain()
	if err != nil {
		t.Skip(err)
	}
	g, err := warmGuest(context.Background(), tc, true)
	require.NoError(t, err)
	bin, err := shared.builder.runGoBuild(context.Background(), tc, g, warmTimeout, false)
	require.NoError(t, err)
	assert.False(t, strings.Contains(string(bin), "net/http."), "the test module links net/http")
	assert.True(t, strings.Contains(string(bin), "testify/assert.Equal"), "the test module links testify's assert")

	res, err := shared.Test(context.Background(), sandbox.Source{Code: "package artifact\n\nfunc Double(n int) int { return 2 * n }\n"},
		"package artifact\n\nimport (\n\t\"testing\"\n\n\t\"github.com/stretchr/testify/assert\"\n)\n\n"+
			"func TestOK(t *testing.T) { assert.Equal(t, 4, Double(2)) }\n\nfunc TestWrong(t *testing.T) { assert.Equal(t, 5, Double(2)) }\n", sandbox.Input{})
	require.NoError(t, err)
	require.Len(t, res, 2)
	assert.True(t, res[0].Passed, res[0].Message)
	assert.False(t, res[1].Passed)
	assert.Contains(t, res[1].Message, "Not equal")
}
