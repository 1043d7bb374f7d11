package forge

import (
	"context"
	"encoding/json"
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

func TestProviderFromEnv(t *testing.T) {
	cas := filepath.Join(t.TempDir(), "c.jsonl")
	require.NoError(t, os.WriteFile(cas, []byte("{\"role\":\"text\",\"method\":\"upper\",\"kind\":\"generate\",\"attempt\":1,\"code\":\"x\"}\n"), 0o644))
	for _, c := range []struct {
		name, spec string
		env        map[string]string
		want       string // the provider's name; "" for none
		wantErr    string
	}{
		{"none named", "", nil, "", ""},
		{"blank", "  ", map[string]string{"FORGE_PROVIDER": " "}, "", ""},
		{"from the environment", "", map[string]string{"FORGE_PROVIDER": "replay:" + cas}, "replay", ""},
		{"the spec wins", "replay:" + cas, map[string]string{"FORGE_PROVIDER": "nonsense"}, "replay", ""},
		{"misconfigured", "", map[string]string{"FORGE_PROVIDER": "nonsense"}, "", "unknown provider"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := ProviderFromEnv(c.spec, func(k string) string { return c.env[k] })
			if c.wantErr != "" {
				assert.ErrorContains(t, err, c.wantErr)
				return
			}
			require.NoError(t, err)
			if c.want == "" {
				assert.Nil(t, p)
			} else {
				require.NotNil(t, p)
				assert.Equal(t, c.want, p.Name())
			}
		})
	}
}

// TestOpenProviderFromEnv: a library user of Open who sets no Provider gets the one
// $FORGE_PROVIDER names, as the CLI does: the first call generates with it.
func TestOpenProviderFromEnv(t *testing.T) {
	cas := filepath.Join(t.TempDir(), "c.jsonl")
	l, err := json.Marshal(line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperOK})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(cas, append(l, '\n'), 0o644))
	t.Setenv("FORGE_PROVIDER", "replay:"+cas)
	f := openForge(t, t.TempDir(), nil)
	require.NoError(t, f.AddRole(textContract()))
	o := f.Call(context.Background(), "text", "upper", json.RawMessage(`{"s":"go"}`))
	require.True(t, o.OK, "%+v", o.Err)
	assert.Equal(t, `"GO"`, string(o.Value))
}
