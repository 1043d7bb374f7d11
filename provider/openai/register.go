package openai

import "github.com/artifactforge/forge/provider"

func init() {
	provider.Register(provider.Registration{
		Name:          Name,
		Usage:         "openai (OPENAI_API_KEY; FORGE_MODEL; OPENAI_BASE_URL for Ollama, vLLM or llama.cpp)",
		ContextTokens: 128_000,
		Open:          provider.ModelOpener(FromEnv, New),
	})
}
