package provider

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/artifactforge/forge/provider/anthropic"
	"github.com/artifactforge/forge/provider/command"
	"github.com/artifactforge/forge/provider/internal/gen"
	"github.com/artifactforge/forge/provider/openai"
	"github.com/artifactforge/forge/provider/replay"
)

// ErrNotConfigured is wrapped by Open's error when neither the spec nor $FORGE_PROVIDER names
// a provider, so callers can still run persisted artifacts and only fail generation.
var ErrNotConfigured = errors.New("no code generator configured")

// EnvProvider is the environment variable Open falls back to when the spec is empty.
const EnvProvider = gen.EnvProvider

// Setup lists every way to configure a provider; it ends the not-configured error.
const Setup = "pass --provider or set FORGE_PROVIDER to one of: " +
	"openai (OPENAI_API_KEY; FORGE_MODEL; OPENAI_BASE_URL for Ollama, vLLM or llama.cpp), " +
	"anthropic (ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN; ANTHROPIC_BASE_URL; FORGE_MODEL), " +
	"'command:PROG ARGS' (prompt on stdin, answer on stdout), " +
	"replay:PATH (a JSON Lines cassette)"

// Open builds the provider a spec names:
//
//	replay:PATH         a cassette file
//	openai[:MODEL]      OpenAI-compatible chat completions (OPENAI_API_KEY, OPENAI_BASE_URL)
//	anthropic[:MODEL]   the Messages API (ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN, ANTHROPIC_BASE_URL)
//	command:PROG ARGS   an external program
//
// An empty spec falls back to $FORGE_PROVIDER. Settings come from env (os.Getenv when nil):
// FORGE_MODEL, FORGE_MAX_TOKENS, FORGE_PROVIDER_TIMEOUT, FORGE_PROVIDER_RETRIES and
// FORGE_CODE_TOOL plus each provider's own. Every error is an *Error of kind Misconfigured
// whose message says how to fix it.
func Open(spec string, env func(string) string) (Provider, error) {
	if env == nil {
		env = os.Getenv
	}
	spec = strings.TrimSpace(spec)
	if spec == "" {
		spec = strings.TrimSpace(env(EnvProvider))
	}
	if spec == "" {
		return nil, &Error{Kind: Misconfigured, Message: Setup, Err: ErrNotConfigured}
	}
	scheme, rest, _ := strings.Cut(spec, ":")
	rest = strings.TrimSpace(rest)
	withModel := func(model string) func(string) string {
		if model == "" {
			return env
		}
		return func(k string) string {
			if k == gen.EnvModel {
				return model
			}
			return env(k)
		}
	}
	switch strings.ToLower(strings.TrimSpace(scheme)) {
	case replay.Name:
		if rest == "" {
			return nil, &Error{Kind: Misconfigured, Provider: replay.Name, Message: "no cassette path: use --provider replay:PATH"}
		}
		return built(replay.Open(rest))
	case openai.Name:
		cfg, err := openai.FromEnv(withModel(rest))
		if err != nil {
			return nil, err
		}
		return built(openai.New(cfg))
	case anthropic.Name:
		cfg, err := anthropic.FromEnv(withModel(rest))
		if err != nil {
			return nil, err
		}
		return built(anthropic.New(cfg))
	case command.Name:
		cfg, err := command.FromSpec(rest, env)
		if err != nil {
			return nil, err
		}
		return built(command.New(cfg))
	}
	return nil, &Error{Kind: Misconfigured, Message: fmt.Sprintf("unknown provider %q; %s", spec, Setup)}
}

// built turns a constructor's result into the interface without a typed nil on failure.
func built[P Provider](p P, err error) (Provider, error) {
	if err != nil {
		return nil, err
	}
	return p, nil
}
