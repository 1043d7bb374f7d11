//go:build unix

package assembler

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCalibratorIgnoresAPipe: cache/tokens.json only tunes prompt sizes; a named pipe planted
// there blocked every prompt until a writer came. It is ignored, like a file that does not parse.
func TestCalibratorIgnoresAPipe(t *testing.T) {
	p := filepath.Join(t.TempDir(), "tokens.json")
	require.NoError(t, syscall.Mkfifo(p, 0o644))
	c, err := OpenCalibrator(p)
	require.NoError(t, err)
	require.NotNil(t, c)
}
