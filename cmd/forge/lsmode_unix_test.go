//go:build unix

package main

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/registry"
)

// TestLsShowsAnArtifactEveryUserMayWriteAsAnError: with no doctor run and a settled index,
// `forge ls` listed an artifact whose file every user may write as sound, though every call
// refuses to open it; it is listed as an error with the chmod to run.
func TestLsShowsAnArtifactEveryUserMayWriteAsAnError(t *testing.T) {
	store := t.TempDir()
	code, _, errOut := runCLI(t, storeArgs(store, "role", "add", "--role", "text", "--purpose", "string tools")...)
	require.Equal(t, 0, code, errOut)
	putArtifact(t, store, "text", "upper", "package artifact\n\nfunc Upper(s string) string { return s }\n")
	time.Sleep(registry.IndexSettle + 20*time.Millisecond) // not a measure: the directory settles
	for range 2 {                                          // the second reads the settled index
		code, out, errOut := runCLI(t, storeArgs(store, "ls")...)
		require.Equal(t, 0, code, errOut)
		require.NotContains(t, out, "ERROR")
	}
	s, err := registry.Open(store)
	require.NoError(t, err)
	p := s.ArtifactPath("text", "upper")
	require.NoError(t, os.Chmod(p, 0o666))
	code, out, errOut := runCLI(t, storeArgs(store, "ls")...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "ERROR")
	code, out, errOut = runCLI(t, storeArgs(store, "--json", "ls")...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "writable by every user")
	assert.Contains(t, out, "chmod o-w "+p)
}
