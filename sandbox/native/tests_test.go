package native

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/sandboxtest"
)

// TestAcceptanceTests runs a test file with testify against an artifact: a test that passes, one
// that fails with testify's message, one that loops past its deadline (its worker is killed and
// the tests after it run in a new one) and one that panics.
func TestAcceptanceTests(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a test worker")
	}
	code := "package artifact\n\nfunc Double(n int) int { return 2 * n }\n"
	tests := `package artifact

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestA(t *testing.T) { assert.Equal(t, 4, Double(2)) }

func TestB(t *testing.T) { assert.Equal(t, 5, Double(2)) }

func TestC(t *testing.T) {
	for n := 0; ; n++ {
		if Double(n) < 0 {
			return
		}
	}
}

func TestD(t *testing.T) { var m map[string]int; m["x"] = 1 }

func TestE(t *testing.T) { assert.Equal(t, 6, Double(3)) }
`
	res, err := shared.Test(context.Background(), sandbox.Source{Code: code}, tests, sandbox.Input{Limits: sandbox.Limits{Timeout: 500e6}})
	require.NoError(t, err)
	require.Len(t, res, 5)
	byName := map[string]sandbox.TestResult{}
	for _, r := range res {
		byName[r.Name] = r
		t.Logf("%s passed=%v %s", r.Name, r.Passed, strings.ReplaceAll(r.Message, "\n", " | "))
	}
	assert.True(t, byName["TestA"].Passed)
	assert.False(t, byName["TestB"].Passed)
	assert.Contains(t, byName["TestB"].Message, "expected: 5")
	assert.False(t, byName["TestC"].Passed)
	assert.Contains(t, byName["TestC"].Message, "deadline")
	assert.False(t, byName["TestD"].Passed)
	assert.Contains(t, byName["TestD"].Message, "nil map")
	assert.True(t, byName["TestE"].Passed, "runs in a new worker after TestC and TestD stopped theirs")
}

// TestHumanEval runs the first HumanEval-X Go problems' canonical solutions against their example
// tests, as forge test does.
func TestHumanEval(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a test worker per problem")
	}
	problems := sandboxtest.LoadHumanEval(t)
	for _, p := range problems[:3] {
		res, err := shared.Test(context.Background(), sandbox.Source{Code: p.Prompt + p.CanonicalSolution}, p.TestSetup+"\n"+p.ExampleTest, sandbox.Input{})
		require.NoError(t, err, p.TaskID)
		for _, r := range res {
			assert.True(t, r.Passed, "%s %s: %s", p.TaskID, r.Name, r.Message)
		}
	}
}

// TestTestFileMayUseTheClock: a test file may read the real clock and seed math/rand with it
// (sandboxtest.RunClockTests), here too.
func TestTestFileMayUseTheClock(t *testing.T) {
	if testing.Short() {
		t.Skip("builds test workers")
	}
	sandboxtest.RunClockTests(t, shared)
	sandboxtest.RunHumanEvalClockTests(t, shared)
}
