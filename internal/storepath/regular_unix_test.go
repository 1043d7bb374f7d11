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
