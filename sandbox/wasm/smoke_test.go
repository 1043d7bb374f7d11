package wasm

import (
	"context"
	"testing"

	"github.com/artifactforge/forge/sandbox"
)

func TestSmoke(t *testing.T) {
	ctx := context.Background()
	p, err := shared.Compile(ctx, sandbox.Source{Code: "package artifact\nfunc Add(a, b int) int { return a + b }\n"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := shared.Run(ctx, p, sandbox.Input{Args: []byte(`[1,2]`)})
	t.Log(string(out.Value), err)
}
