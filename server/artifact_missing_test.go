package server

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// GET /v1/artifacts/{role}/{method} and /v1/history/... say why an artifact is not there, as
// `forge show` does (forge.LoadArtifact): a 404 that names the quarantine entry to restore, the
// method the role does not declare, or the first call that creates it; never a 500 for a file
// the store has already moved aside.
func TestArtifactNotThereSaysWhy(t *testing.T) {
	dir := t.TempDir()
	f := openForge(t, dir)
	_, ts := newTestServer(t, f, Options{})
	require.True(t, f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"a"}`)).OK)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tools", "text", "upper.json"), []byte("{damaged"), 0o644))

	type body struct {
		Error struct{ Message string } `json:"error"`
	}
	for _, c := range []struct{ path, want string }{
		{"/v1/artifacts/text/upper", "forge quarantine restore"}, // found damaged by this read
		{"/v1/history/text/upper", "forge quarantine restore"},   // in quarantine since
		{"/v1/artifacts/text/nosuch", "declares no method nosuch"},
		{"/v1/artifacts/text/lower", "created by the first"},
	} {
		var b body
		assert.Equal(t, 404, get(t, ts.URL+c.path, &b), c.path)
		assert.Contains(t, b.Error.Message, c.want, c.path)
	}
}
