package wasm

import (
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPolitely: what f starts runs at nice 10, and the process's other threads keep theirs.
func TestPolitely(t *testing.T) {
	var out []byte
	var err error
	politely(func() { out, err = exec.Command("sh", "-c", "cut -d' ' -f19 /proc/$$/stat").Output() })
	require.NoError(t, err)
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	require.NoError(t, err)
	mine, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0)
	require.NoError(t, err)
	// Getpriority returns 20-nice on Linux.
	assert.Equal(t, 20-mine+10, n, "a child started politely runs 10 nicer than this thread")
}
