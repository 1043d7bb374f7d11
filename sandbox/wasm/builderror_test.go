package wasm

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/artifactforge/forge/sandbox"
)

// TestBuildErrorOutsideArtifactIsCompile: go build failing on the generated wrapper because of
// the code (a colliding name, an excluding build line, a redeclared predeclared name) is the
// code's compile error, not an internal failure that would let the gate pass it undecided.
func TestBuildErrorOutsideArtifactIsCompile(t *testing.T) {
	cases := map[string]string{
		"collision":   "# forge/artifact\nartifact/dispatch.go:12:6: forgeCall redeclared in this block\n\tartifact/artifact.go:5:6: other declaration of forgeCall",
		"wrapper":     "# forge/artifact\nartifact/dispatch.go:20:14: cannot use x (variable of type any) as int value",
		"constraints": "package forge/artifact: build constraints exclude all Go files in /tmp/forge-wasm-1/artifact",
	}
	for name, out := range cases {
		e := buildError(out, errors.New("exit status 1"))
		if name == "collision" {
			assert.Equal(t, sandbox.KindCompile, e.Kind, name) // names artifact.go: the artifact's line
			continue
		}
		assert.Equal(t, sandbox.KindCompile, e.Kind, name)
		assert.Contains(t, e.Message, "generated wrapper", name)
		assert.NotEmpty(t, e.Hint)
	}
	e := buildError("signal: killed", errors.New("signal: killed"))
	assert.Equal(t, sandbox.KindInternal, e.Kind, "a toolchain that died says nothing about the code")
}
