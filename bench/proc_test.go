package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLogMeterCountsAcrossRotations rotates a log the way forge's event log does (the current
// file renamed to .1, .1 to .2, the oldest deleted) and checks every appended byte is counted
// once, the bytes there before the meter started excluded.
func TestLogMeterCountsAcrossRotations(t *testing.T) {
	dir := t.TempDir()
	cur := filepath.Join(dir, "forge.jsonl")
	appendTo := func(n int) {
		f, err := os.OpenFile(cur, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		require.NoError(t, err)
		_, err = f.WriteString(strings.Repeat("x", n))
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	rotate := func() {
		_ = os.Remove(cur + ".2")
		_ = os.Rename(cur+".1", cur+".2")
		require.NoError(t, os.Rename(cur, cur+".1"))
	}
	appendTo(100) // before the meter
	m := newLogMeter(dir, time.Hour)
	want := int64(0)
	for i := 0; i < 6; i++ {
		// As forge's log: written in small appends, sampled between them, rotated past a size;
		// a file is sampled while it is still small (the meter samples every 20 ms, the log
		// rotates at 16 MiB), which is what tells a reused inode from the file it belonged to.
		for _, n := range []int{10, 500, 500 + i} {
			appendTo(n)
			want += int64(n)
			m.sample(false)
		}
		rotate()
		m.sample(false)
	}
	appendTo(7)
	want += 7
	assert.Equal(t, want, m.written())
	assert.Equal(t, want, m.written(), "written is idempotent")
}

func TestProcStatus(t *testing.T) {
	p := filepath.Join(t.TempDir(), "status")
	require.NoError(t, os.WriteFile(p, []byte("Name:\tforge\nVmHWM:\t   2048 kB\nVmRSS:\t   1024 kB\n"), 0o644))
	rss, hwm, ok := procStatus(p)
	assert.True(t, ok)
	assert.Equal(t, int64(1024<<10), rss)
	assert.Equal(t, int64(2048<<10), hwm)
	_, _, ok = procStatus(filepath.Join(t.TempDir(), "none"))
	assert.False(t, ok)
	if m := readMem(); m.Source == sourceProc {
		assert.Positive(t, m.RSS)
	}
}
