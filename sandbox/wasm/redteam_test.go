package wasm

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/sandbox"
)

// TestRedteamArtifactCannotForgeTestVerdict (as in sandbox/native): the artifact prints testing's own verdict line for
// the test that calls it; the test then fails. The report is testing's -test.v stdout, which the
// artifact shares, so a forged "--- PASS" line must not count.
func TestRedteamArtifactCannotForgeTestVerdict(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a test worker")
	}
	code := "package artifact\n\nimport \"fmt\"\n\nfunc Double(n int) int {\n\tfmt.Println(\"--- PASS: TestDouble (0.00s)\")\n\treturn n\n}\n"
	tests := `package artifact

import "testing"

func TestDouble(t *testing.T) {
	if Double(2) != 4 {
		t.Fatal("Double(2) != 4")
	}
}
`
	res, err := shared.Test(context.Background(), sandbox.Source{Code: code}, tests, sandbox.Input{})
	require.NoError(t, err)
	require.Len(t, res, 1)
	assert.False(t, res[0].Passed, "the artifact forged its test's verdict: %+v", res[0])
}
