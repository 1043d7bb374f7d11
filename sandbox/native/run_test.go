package native

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/sandbox"
)

func TestAdd(t *testing.T) {
	ctx := context.Background()
	p, err := shared.Compile(ctx, sandbox.Source{Code: "package main\n\nfunc Add(a, b int) int { return a + b }\n"})
	require.NoError(t, err)
	defer p.Close()
	out, err := shared.Run(ctx, p, sandbox.Input{Args: json.RawMessage(`[2, 3]`)})
	require.NoError(t, err)
	assert.JSONEq(t, "5", string(out.Value))
	out, err = shared.Run(ctx, p, sandbox.Input{Args: json.RawMessage(`{"a": 40, "b": 2}`)})
	require.NoError(t, err)
	assert.JSONEq(t, "42", string(out.Value))
}
