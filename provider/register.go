package provider

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/artifactforge/forge/provider/internal/gen"
)

// ErrNotConfigured is wrapped by Open's error when neither the spec nor $FORGE_PROVIDER names
// a provider, so callers can still run persisted artifacts and only fail generation.
var ErrNotConfigured = errors.New("no code generator configured")

// EnvProvider is the environment variable Open falls back to when the spec is empty.
const EnvProvider = gen.EnvProvider

// Registration describes a provider. Each provider package registers itself from its init
// (provider/openai, provider/anthropic, provider/command, provider/replay), so adding one is
// adding a package and importing it where the binary's set is listed (forge/all); this package
// names none of them.
type Registration struct {
	// Name is the scheme of a spec: "NAME" or "NAME:REST" (matched case-insensitively).
	Name string
	// Usage is how to configure it, for the not-configured error: "openai (OPENAI_API_KEY; ...)".
	Usage string
	// ContextTokens is the default token ceiling of a prompt to its models (0: the forge's
	// default); the operator's setting overrides it.
	ContextTokens int
	// Open builds the provider from the spec's part after "NAME:" (trimmed, maybe empty) and
	// env (never nil). Its errors should be *Error of kind Misconfigured saying how to fix it.
	Open func(rest string, env func(string) string) (Provider, error)
}

var (
	registryMu sync.RWMutex
	registered = map[string]Registration{}
)

// Register makes a provider available to Open by name. It panics on an empty or duplicate name
// or a nil Open, as database/sql.Register does: both are programming errors found at start-up.
func Register(r Registration) {
	name := strings.ToLower(strings.TrimSpace(r.Name))
	if name == "" || r.Open == nil {
		panic("provider: Register needs a name and Open")
	}
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registered[name]; dup {
		panic("provider: Register called twice for provider " + name)
	}
	r.Name = name
	registered[name] = r
}

// Registered returns every registered provider, sorted by name.
func Registered() []Registration {
	registryMu.RLock()
	defer registryMu.RUnlock()
	out := make([]Registration, 0, len(registered))
	for _, r := range registered {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b Registration) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Lookup returns the registration called name (case-insensitive), or the zero Registration.
func Lookup(name string) Registration {
	registryMu.RLock()
	defer registryMu.RUnlock()
	return registered[strings.ToLower(strings.TrimSpace(name))]
}

// Setup lists every way to configure a registered provider; it ends the not-configured error.
func Setup() string {
	regs := Registered()
	if len(regs) == 0 {
		return "this program was built without any provider: import the providers you ship " +
			"(e.g. _ \"github.com/artifactforge/forge/forge/all\")"
	}
	ways := make([]string, len(regs))
	for i, r := range regs {
		ways[i] = r.Usage
		if ways[i] == "" {
			ways[i] = r.Name
		}
	}
	return "pass --provider or set FORGE_PROVIDER to one of: " + strings.Join(ways, ", ")
}

// Open builds the provider a spec names, "NAME" or "NAME:REST", among the registered ones
// (with forge/all: replay:PATH, openai[:MODEL], anthropic[:MODEL], command:PROG ARGS).
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
		return nil, &Error{Kind: Misconfigured, Message: Setup(), Err: ErrNotConfigured}
	}
	scheme, rest, _ := strings.Cut(spec, ":")
	registryMu.RLock()
	r, ok := registered[strings.ToLower(strings.TrimSpace(scheme))]
	registryMu.RUnlock()
	if !ok {
		return nil, &Error{Kind: Misconfigured, Message: fmt.Sprintf("unknown provider %q; %s", spec, Setup())}
	}
	p, err := r.Open(strings.TrimSpace(rest), env)
	if err != nil {
		return nil, err
	}
	if p == nil {
		return nil, &Error{Kind: Misconfigured, Provider: r.Name, Message: "provider " + r.Name + " opened no provider"}
	}
	return p, nil
}

// Built turns a constructor's result into the interface without a typed nil on failure; for
// registrations' Open.
func Built[P Provider](p P, err error) (Provider, error) {
	if err != nil {
		return nil, err
	}
	return p, nil
}

// ModelOpener is the Open of a provider whose spec is NAME[:MODEL] and whose settings come from
// env: MODEL, when given, replaces FORGE_MODEL for fromEnv, and build makes the provider.
func ModelOpener[C any, P Provider](fromEnv func(env func(string) string) (C, error), build func(C) (P, error)) func(model string, env func(string) string) (Provider, error) {
	return func(model string, env func(string) string) (Provider, error) {
		if model != "" {
			base := env
			env = func(k string) string {
				if k == gen.EnvModel {
					return model
				}
				return base(k)
			}
		}
		cfg, err := fromEnv(env)
		if err != nil {
			return nil, err
		}
		return Built(build(cfg))
	}
}
