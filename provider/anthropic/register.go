package anthropic

import "github.com/artifactforge/forge/provider"

func init() {
	provider.Register(provider.Registration{
		Name:          Name,
		Usage:         "anthropic (ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN; ANTHROPIC_BASE_URL; FORGE_MODEL)",
		ContextTokens: 200_000,
		Open:          provider.ModelOpener(FromEnv, New),
	})
}
