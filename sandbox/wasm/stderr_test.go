package wasm

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/sandbox"
)

// TestStderrReportAfterOutput classifies a failure whose runtime report comes after more than
// 8 KiB of the guest's own output to stderr: the report is at the end, and the stderr buffer
// keeps the end (it kept only the first 8 KiB, and the stack overflow was reported as a panic).
func TestStderrReportAfterOutput(t *testing.T) {
	p := compile(t, `package artifact

func Deep(n int) int {
	if n == 0 {
		for i := 0; i < 200; i++ {
			println("a line of the guest's own output, written to stderr before it fails")
		}
	}
	return Deep(n+1) + 1
}
`)
	_, err := shared.Run(context.Background(), p, sandbox.Input{Args: []byte(`[0]`)})
	require.Error(t, err)
	assert.Equal(t, sandbox.KindDepth, sandbox.KindOf(err), err.Error())
}
