package provider_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/provider"
	"github.com/artifactforge/forge/provider/anthropic"
	"github.com/artifactforge/forge/provider/command"
	"github.com/artifactforge/forge/provider/openai"
	"github.com/artifactforge/forge/provider/replay"
)

func TestOpen(t *testing.T) {
	type modeler interface{ Model() string }
	tests := []struct {
		name  string
		spec  string
		env   map[string]string
		check func(t *testing.T, p provider.Provider)
		// errContains is set when Open must fail with a Misconfigured error saying these.
		errContains []string
	}{
		{
			name:        "nothing configured",
			errContains: []string{"no code generator configured", "--provider", "FORGE_PROVIDER", "OPENAI_API_KEY", "FORGE_MODEL", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "command:PROG ARGS", "replay:PATH"},
		},
		{
			name: "FORGE_PROVIDER when the spec is empty",
			env:  map[string]string{"FORGE_PROVIDER": "replay:testdata/upper.jsonl"},
			check: func(t *testing.T, p provider.Provider) {
				assert.IsType(t, &replay.Cassette{}, p)
			},
		},
		{
			name: "the spec wins over FORGE_PROVIDER",
			spec: "replay:testdata/upper.jsonl",
			env:  map[string]string{"FORGE_PROVIDER": "anthropic"},
			check: func(t *testing.T, p provider.Provider) {
				assert.Equal(t, "replay", p.Name())
			},
		},
		{name: "replay without a path", spec: "replay:", errContains: []string{"replay:PATH"}},
		{name: "replay with a missing file", spec: "replay:testdata/missing.jsonl", errContains: []string{"missing.jsonl"}},
		{
			name:        "openai without a key",
			spec:        "openai",
			errContains: []string{"OPENAI_API_KEY is not set", "--provider openai", "FORGE_MODEL", "OPENAI_BASE_URL"},
		},
		{
			name: "openai with a key uses the default model",
			spec: "openai",
			env:  map[string]string{"OPENAI_API_KEY": "sk-test"},
			check: func(t *testing.T, p provider.Provider) {
				require.IsType(t, &openai.Provider{}, p)
				assert.Equal(t, openai.DefaultModel, p.(modeler).Model())
			},
		},
		{
			name: "openai:MODEL against a local server needs no key",
			spec: "openai:qwen2.5-coder:7b",
			env:  map[string]string{"OPENAI_BASE_URL": "http://localhost:11434/v1", "FORGE_MODEL": "ignored"},
			check: func(t *testing.T, p provider.Provider) {
				assert.Equal(t, "qwen2.5-coder:7b", p.(modeler).Model())
			},
		},
		{
			name:        "openai against a local server needs a model",
			spec:        "openai",
			env:         map[string]string{"OPENAI_BASE_URL": "http://localhost:8000/v1"},
			errContains: []string{"FORGE_MODEL is not set for http://localhost:8000/v1"},
		},
		{
			name:        "openai with a bad base URL",
			spec:        "openai",
			env:         map[string]string{"OPENAI_BASE_URL": "localhost:8000", "FORGE_MODEL": "m"},
			errContains: []string{`OPENAI_BASE_URL="localhost:8000" is not an http(s) URL`},
		},
		{
			name:        "bad shared setting",
			spec:        "openai",
			env:         map[string]string{"OPENAI_API_KEY": "k", "FORGE_MAX_TOKENS": "lots"},
			errContains: []string{`FORGE_MAX_TOKENS="lots" is not a non-negative integer`},
		},
		{
			name:        "anthropic without a key",
			spec:        "anthropic",
			errContains: []string{"ANTHROPIC_API_KEY is not set", "--provider anthropic", "FORGE_MODEL"},
		},
		{
			name: "anthropic with a key and FORGE_MODEL",
			spec: "Anthropic",
			env:  map[string]string{"ANTHROPIC_API_KEY": "k", "FORGE_MODEL": "claude-test"},
			check: func(t *testing.T, p provider.Provider) {
				require.IsType(t, &anthropic.Provider{}, p)
				assert.Equal(t, "claude-test", p.(modeler).Model())
			},
		},
		{
			name: "command",
			spec: "command:sh -c 'cat >/dev/null; echo package artifact'",
			check: func(t *testing.T, p provider.Provider) {
				assert.IsType(t, &command.Provider{}, p)
			},
		},
		{name: "command without a program", spec: "command:", errContains: []string{"no program given"}},
		{name: "unknown provider", spec: "gemini", errContains: []string{`unknown provider "gemini"`, "openai", "anthropic"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := provider.Open(tt.spec, func(k string) string { return tt.env[k] })
			if tt.errContains != nil {
				require.Error(t, err)
				assert.True(t, p == nil, "no typed nil provider on failure")
				var pe *provider.Error
				require.True(t, errors.As(err, &pe), "%T", err)
				assert.Equal(t, provider.Misconfigured, pe.Kind)
				assert.False(t, pe.Retriable())
				for _, c := range tt.errContains {
					assert.Contains(t, err.Error(), c)
				}
				return
			}
			require.NoError(t, err)
			tt.check(t, p)
		})
	}
}

func TestOpenNotConfiguredIsDistinguishable(t *testing.T) {
	_, err := provider.Open("  ", func(string) string { return " " })
	assert.ErrorIs(t, err, provider.ErrNotConfigured)
	_, err = provider.Open("openai", func(string) string { return "" })
	assert.NotErrorIs(t, err, provider.ErrNotConfigured)
}

// A provider registered from outside this package is opened by name and listed in Setup: adding
// a provider is adding a package.
func TestRegisteredProviderIsOpenedByName(t *testing.T) {
	var gotRest string
	provider.Register(provider.Registration{
		Name:  "fake-test",
		Usage: "fake-test:ANYTHING (for this test)",
		Open: func(rest string, env func(string) string) (provider.Provider, error) {
			gotRest = rest
			return provider.Built(replay.New("fake", nil))
		},
	})
	p, err := provider.Open("FAKE-test: some rest ", nil)
	require.NoError(t, err)
	assert.NotNil(t, p)
	assert.Equal(t, "some rest", gotRest)
	assert.Contains(t, provider.Setup(), "fake-test:ANYTHING")
	assert.Panics(t, func() {
		provider.Register(provider.Registration{Name: "fake-test", Open: func(string, func(string) string) (provider.Provider, error) { return nil, nil }})
	})
}
