package replay

import "github.com/artifactforge/forge/provider"

func init() {
	provider.Register(provider.Registration{
		Name:  Name,
		Usage: "replay:PATH (a JSON Lines cassette)",
		Open: func(path string, _ func(string) string) (provider.Provider, error) {
			if path == "" {
				return nil, &provider.Error{Kind: provider.Misconfigured, Provider: Name, Message: "no cassette path: use --provider replay:PATH"}
			}
			return provider.Built(Open(path))
		},
	})
}
