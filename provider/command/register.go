package command

import "github.com/artifactforge/forge/provider"

func init() {
	provider.Register(provider.Registration{
		Name:  Name,
		Usage: "'command:PROG ARGS' (prompt on stdin, answer on stdout)",
		Open: func(argline string, env func(string) string) (provider.Provider, error) {
			cfg, err := FromSpec(argline, env)
			if err != nil {
				return nil, err
			}
			return provider.Built(New(cfg))
		},
	})
}
