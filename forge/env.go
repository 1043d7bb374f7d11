package forge

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/artifactforge/forge/registry"
	"github.com/artifactforge/forge/repair"
)

// OptionsFromEnv reads the operator's switches: FORGE_READ_PATH=off, FORGE_REPAIR=off,
// FORGE_LEARNING=off, FORGE_CONTEXT_TOKENS=N, FORGE_GENERATE_ONLY=1, FORGE_CANARY=role,role, FORGE_MAX_PROVIDER_CALLS=N and
// FORGE_MAX_REPAIRS_BEFORE_REGEN=N, FORGE_SANDBOX and FORGE_EVENTS=aggregate[:interval]|all|off.
// The CLI, the server and the MCP server share it.
func OptionsFromEnv(getenv func(string) string) (Options, error) {
	var o Options
	off := func(k string) (bool, error) {
		switch strings.ToLower(strings.TrimSpace(getenv(k))) {
		case "", "on", "1", "true":
			return false, nil
		case "off", "0", "false":
			return true, nil
		}
		return false, fmt.Errorf("%s=%q: use on or off", k, getenv(k))
	}
	var err error
	if o.Switches.ReadPathOff, err = off("FORGE_READ_PATH"); err != nil {
		return o, err
	}
	if o.Switches.RepairOff, err = off("FORGE_REPAIR"); err != nil {
		return o, err
	}
	if o.NoLearning, err = off("FORGE_LEARNING"); err != nil { // knowledge hook: FORGE_LEARNING=off
		return o, err
	}
	switch strings.ToLower(strings.TrimSpace(getenv("FORGE_GENERATE_ONLY"))) {
	case "", "0", "false", "off":
	case "1", "true", "on":
		o.Switches.GenerateOnly = true
	default:
		return o, fmt.Errorf("FORGE_GENERATE_ONLY=%q: use 1 or 0", getenv("FORGE_GENERATE_ONLY"))
	}
	for _, r := range strings.Split(getenv("FORGE_CANARY"), ",") {
		if r = strings.TrimSpace(r); r != "" {
			if err := registry.ValidateName("role", r); err != nil {
				return o, fmt.Errorf("FORGE_CANARY: %w", err)
			}
			o.Switches.Canary = append(o.Switches.Canary, r)
		}
	}
	o.DefaultSandbox = strings.TrimSpace(getenv("FORGE_SANDBOX"))
	switch v := strings.ToLower(strings.TrimSpace(getenv("FORGE_EVENTS"))); { // events hook: the log's mode
	case v == "" || v == "aggregate":
	case v == "all":
		o.EventsPerCall = true
	case v == "off":
		o.NoEvents = true
	case strings.HasPrefix(v, "aggregate:"):
		d, err := time.ParseDuration(strings.TrimPrefix(v, "aggregate:"))
		if err != nil || d <= 0 {
			return o, fmt.Errorf("FORGE_EVENTS (or --events) %q: the interval after aggregate: is a positive duration, e.g. aggregate:30s", v)
		}
		o.EventInterval = d
	default:
		return o, fmt.Errorf("FORGE_EVENTS (or --events) %q: use aggregate (the default: warm successes folded per artifact and second), aggregate:30s (another interval), all (one line per call) or off", v)
	}
	if v := getenv("FORGE_CONTEXT_TOKENS"); v != "" { // assembler hook: the prompts' token ceiling
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return o, fmt.Errorf("FORGE_CONTEXT_TOKENS=%q: use a positive number of tokens", v)
		}
		o.ContextTokens = n
	}
	if v := getenv("FORGE_MAX_PROVIDER_CALLS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return o, fmt.Errorf("FORGE_MAX_PROVIDER_CALLS=%q: use a positive number", v)
		}
		o.MaxProviderCalls = n
	}
	if v := getenv("FORGE_MAX_REPAIRS_BEFORE_REGEN"); v != "" {
		b, err := repair.ParseBudget(v)
		if err != nil {
			return o, fmt.Errorf("FORGE_MAX_REPAIRS_BEFORE_REGEN: %w", err)
		}
		o.Budget = b
	}
	return o, nil
}
