package forge

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/artifactforge/forge/provider"
	"github.com/artifactforge/forge/sandbox"
)

type namedProvider struct {
	provider.Provider
	name string
}

func (p namedProvider) Name() string { return p.name }

// TestPromptCeilingIsTheProvidersRegistration: a provider's default token ceiling is what it
// registered, the forge's default when it registered none, and the operator's setting wins.
func TestPromptCeilingIsTheProvidersRegistration(t *testing.T) {
	provider.Register(provider.Registration{Name: "ceilingprobe", ContextTokens: 12_345,
		Open: func(string, func(string) string) (provider.Provider, error) { return nil, nil }})
	f := openForge(t, t.TempDir(), nil)
	assert.Equal(t, 12_345, f.budget(namedProvider{name: "ceilingprobe"}).Ceiling)
	assert.Equal(t, 128_000, f.budget(namedProvider{name: "openai"}).Ceiling, "as provider/openai registers")
	assert.Equal(t, DefaultContextTokens, f.budget(namedProvider{name: "replay"}).Ceiling)
	f.opts.ContextTokens = 999
	assert.Equal(t, 999, f.budget(namedProvider{name: "ceilingprobe"}).Ceiling)
}

// TestSystemPromptIsTheBackendsRegistration: a backend's registered Prompt is in the system
// prompt of generations for it, and only for it.
func TestSystemPromptIsTheBackendsRegistration(t *testing.T) {
	sandbox.Register(sandbox.Backend{Name: "promptprobe", Prompt: "- PROBE: write no loops.\n",
		New: func(sandbox.Config) (sandbox.Sandbox, error) { return nil, nil }})
	assert.Contains(t, systemPrompt("promptprobe"), "- PROBE: write no loops.\n")
	assert.True(t, strings.HasSuffix(systemPrompt("promptprobe"), answerRule))
	assert.NotContains(t, systemPrompt("wasm"), "PROBE")
}
