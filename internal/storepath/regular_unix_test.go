//go:build unix

package storepath

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNamedPipeIsRefusedNotWaitedOn: a named pipe planted where forge reads or appends a store
// file (events, journals, sums, the layout marker) blocked the open or the read forever; it is
// refused at once, naming the file.
func TestNamedPipeIsRefusedNotWaitedOn(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "forge.jsonl")
	require.NoError(t, syscall.Mkfifo(p, 0o644))

	_, err := ReadRegular(p, "read")
	require.ErrorIs(t, err, ErrNotRegular)
	assert.Contains(t, err.Error(), p)
	assert.Contains(t, err.Error(), "named pipe")
	_, err = OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644, "append events")
	require.ErrorIs(t, err, ErrNotRegular)
	_, err = OpenFile(p, os.O_RDONLY, 0, "read a cache record")
	require.ErrorIs(t, err, ErrNotRegular)
	_, err = ReadRegular(dir, "read")
	require.ErrorIs(t, err, ErrNotRegular, "a directory is not a store file either")

	ok := filepath.Join(dir, "ok")
	require.NoError(t, os.WriteFile(ok, []byte("data"), 0o644))
	b, err := ReadRegular(ok, "read")
	require.NoError(t, err)
	assert.Equal(t, "data", string(b))
	f, err := OpenFile(ok, os.O_APPEND|os.O_WRONLY, 0, "append")
	require.NoError(t, err)
	_, err = f.WriteString("+")
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// TestFileEveryUserMayWriteIsRefused: a store file (an artifact's code, a contract, a lesson, a
// checksum) that any local user may write, or that sits in a directory any user may write (so
// may be replaced by a file of theirs), is refused on read with the chmod to run; a group may
// write both.
func TestFileEveryUserMayWriteIsRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tools", "text")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	p := filepath.Join(dir, "upper.json")
	require.NoError(t, os.WriteFile(p, []byte("{}"), 0o644))
	_, err := ReadRegular(p, "read")
	require.NoError(t, err)

	require.NoError(t, os.Chmod(p, 0o666))
	_, err = ReadRegular(p, "read")
	require.ErrorIs(t, err, ErrOpenToAll)
	assert.Contains(t, err.Error(), "chmod o-w "+p)
	require.NoError(t, os.Chmod(p, 0o664))
	_, err = ReadRegular(p, "read")
	require.NoError(t, err, "a group may write it")

	require.NoError(t, os.Chmod(dir, 0o777))
	_, err = ReadRegular(p, "read")
	require.ErrorIs(t, err, ErrOpenToAll)
	assert.Contains(t, err.Error(), "chmod o-w "+dir)
	assert.Contains(t, err.Error(), "the directory "+dir+" of "+p)
	require.NoError(t, os.Chmod(dir, 0o775))
	_, err = ReadRegular(p, "read")
	require.NoError(t, err, "a group may write the directory")
}
