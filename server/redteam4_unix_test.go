//go:build unix

package server

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/internal/storepath"
)

// TestRedteam4ClientsFileEveryUserMayWrite: the clients file decides who may call, define roles
// and spend model calls; one that every user may write (or that sits in a directory they may) was
// loaded, so any local user could give themselves a client. A named pipe there blocked the
// server's start. Both are refused, as store files are.
func TestRedteam4ClientsFileEveryUserMayWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "clients.yaml")
	require.NoError(t, os.WriteFile(p, []byte("- name: a\n  token: secret-token-of-client-a\n  roles: [\"*\"]\n"), 0o600))
	_, err := LoadClients(p)
	require.NoError(t, err)

	require.NoError(t, os.Chmod(p, 0o666))
	_, err = LoadClients(p)
	require.ErrorIs(t, err, storepath.ErrOpenToAll)
	assert.Contains(t, err.Error(), "chmod o-w "+p)
	require.NoError(t, os.Chmod(p, 0o600))

	fifo := filepath.Join(dir, "fifo.yaml")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	_, err = LoadClients(fifo)
	require.ErrorIs(t, err, storepath.ErrNotRegular)
}
