package forge

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/artifactforge/forge/provider"
)

// DefaultStore is the store a forge uses when none is named (Options.Store empty, no --store):
// $FORGE_STORE, else $XDG_STATE_HOME/forge, else ~/.local/state/forge.
func DefaultStore() (string, error) { return defaultStore(os.Getenv, os.UserHomeDir) }

// defaultStore is DefaultStore's rule over an environment and a home directory.
func defaultStore(getenv func(string) string, home func() (string, error)) (string, error) {
	if d := getenv("FORGE_STORE"); d != "" {
		return d, nil
	}
	if d := getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "forge"), nil
	}
	h, err := home()
	if err != nil || h == "" {
		return "", fmt.Errorf("forge: cannot find a store: no --store, $FORGE_STORE, $XDG_STATE_HOME or home directory (%v); pass --store DIR or set FORGE_STORE", err)
	}
	return filepath.Join(h, ".local", "state", "forge"), nil
}

// ProviderFromEnv builds the code generator spec names (provider.Open: replay:PATH, openai[:MODEL],
// anthropic[:MODEL], command:PROG ARGS), else the one $FORGE_PROVIDER names, with its settings
// from getenv. Neither naming one is no provider and no error: persisted artifacts still run, and
// generation says how to configure one. A forge opened without Options.Provider uses it on its
// first generation; the CLI with --provider.
func ProviderFromEnv(spec string, getenv func(string) string) (provider.Provider, error) {
	if strings.TrimSpace(spec) == "" && strings.TrimSpace(getenv(provider.EnvProvider)) == "" {
		return nil, nil
	}
	return provider.Open(spec, getenv)
}
