package wasm

import (
	"context"
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
// deadline in the interpreter must pass, because Test reruns it compiled.
func TestSlowInInterpreterRerunsCompiled(t *testing.T) {
	const tests = `package artifact

import "testing"

func TestQuick(t *testing.T) {
	if Fib(10) != 55 {
		t.Fatal("fib(10)")
	}
}

func TestHeavy(t *testing.T) {
	if got := Fib(32); got != 2178309 {
		t.Fatalf("fib(32) = %d", got)
	}
}
`
	in := sandbox.Input{Limits: sandbox.Limits{Timeout: 500 * time.Millisecond}.WithDefaults()}
	src := sandbox.Source{Code: fibArtifact}
	code, af, err := gate(src.Code, false, nil)
	require.NoError(t, err)
	tc, names, err := gateTests(tests, fileImports(af))
	require.NoError(t, err)
	bin, err := shared.builder.build(context.Background(), testGuest(code, tc, names, testifyVersion()), false)
	require.NoError(t, err)

	// The interpreter alone runs out of time on the heavy test (this is what makes the rerun matter).
	start := time.Now()
	done, slow, err := shared.runTestModule(context.Background(), src, bin, engTestInterp, names, in)
	require.NoError(t, err)
	t.Logf("interpreter: %v", time.Since(start))
	assert.True(t, done["TestQuick"].Passed)
	assert.False(t, done["TestHeavy"].Passed)
	assert.Equal(t, []string{"TestHeavy"}, slow)

	start = time.Now()
	res, err := shared.Test(context.Background(), src, tests, in)
	require.NoError(t, err)
	t.Logf("Test: %v", time.Since(start))
	require.Len(t, res, 2)
	for _, r := range res {
		assert.True(t, r.Passed, "%s: %s", r.Name, r.Message)
	}
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
