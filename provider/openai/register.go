package openai

import "github.com/artifactforge/forge/provider"

func init() {
	provider.Register(provider.Registration{
		Name:          Name,
		Usage:         "openai (OPENAI_API_KEY; FORGE_MODEL; OPENAI_BASE_URL for Ollama, vLLM or llama.cpp)",
		ContextTokens: 128_000,
		Open: func(model string, env func(string) string) (provider.Provider, error) {
			cfg, err := FromEnv(provider.WithModel(env, model))
			if err != nil {
				return nil, err
			}
			return provider.Built(New(cfg))
		},
	})
}
