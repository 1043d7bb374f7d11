//go:build !unix

package registry

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// notAFile puts a directory where a store file was.
func notAFile(t *testing.T) func(p string) {
	return func(p string) {
		require.NoError(t, os.Remove(p))
		require.NoError(t, os.Mkdir(p, 0o755))
	}
}
