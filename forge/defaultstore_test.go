package forge

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDefaultStore(t *testing.T) {
	home := func() (string, error) { return "/home/u", nil }
	noHome := func() (string, error) { return "", os.ErrNotExist }
	for _, c := range []struct {
		name    string
		env     map[string]string
		home    func() (string, error)
		want    string
		wantErr string
	}{
		{"FORGE_STORE first", map[string]string{"FORGE_STORE": "/s", "XDG_STATE_HOME": "/x"}, home, "/s", ""},
		{"a URL store", map[string]string{"FORGE_STORE": "nats://h:4222/forge"}, noHome, "nats://h:4222/forge", ""},
		{"then XDG_STATE_HOME", map[string]string{"XDG_STATE_HOME": "/x"}, home, "/x/forge", ""},
		{"then home", nil, home, "/home/u/.local/state/forge", ""},
		{"nothing", nil, noHome, "", "--store"},
		{"an empty home", nil, func() (string, error) { return "", nil }, "", "FORGE_STORE"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := defaultStore(func(k string) string { return c.env[k] }, c.home)
			if c.wantErr != "" {
				assert.ErrorContains(t, err, c.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
		})
	}
}

// TestOpenDefaultStore opens a forge with no store named, as a library user of Open does: it uses
// the store $FORGE_STORE names, the same one the CLI resolves.
func TestOpenDefaultStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	t.Setenv("FORGE_STORE", dir)
	f, err := Open(Options{})
	require.NoError(t, err)
	defer f.Close()
	assert.Equal(t, dir, f.Store().Location())
}
