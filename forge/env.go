package forge

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/artifactforge/forge/registry"
	"github.com/artifactforge/forge/repair"
	"github.com/artifactforge/forge/sandbox"
)

// OptionsFromEnv reads the operator's switches: FORGE_READ_PATH=off, FORGE_REPAIR=off,
// FORGE_LEARNING=off, FORGE_CONTEXT_TOKENS=N, FORGE_GENERATE_ONLY=1, FORGE_CANARY=role,role, FORGE_MAX_PROVIDER_CALLS=N and
// FORGE_MAX_REPAIRS_BEFORE_REGEN=N, FORGE_SANDBOX, FORGE_EVENTS=aggregate[:interval]|all|off, and
// the backends' FORGE_POOL_SIZE=N, FORGE_IDLE_TIMEOUT=D and FORGE_MAX_WORKERS=N, and
// the live set's budget FORGE_MAX_LIVE_PROGRAMS=N and FORGE_MAX_LIVE_BYTES=SIZE (512MiB, 1GiB, or
// bytes; -1: no bound), and FORGE_LOCAL_DIR (Options.LocalDir, a networked store's machine-local
// directory), and the maxima of contract limits FORGE_MAX_MEMORY, FORGE_MAX_TIMEOUT and
// FORGE_MAX_OUTPUT (Options.Maxima). The CLI, the server and the MCP server share it.
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
	if v := getenv("FORGE_MAX_LIVE_PROGRAMS"); v != "" {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n == 0 {
			return o, fmt.Errorf("FORGE_MAX_LIVE_PROGRAMS=%q: use a positive number of compiled programs to keep ready (-1 for no bound)", v)
		}
		o.MaxLivePrograms = n
	}
	if v := getenv("FORGE_MAX_LIVE_BYTES"); v != "" {
		n, err := parseBytes(v)
		if err != nil {
			return o, fmt.Errorf("FORGE_MAX_LIVE_BYTES=%q: %v", v, err)
		}
		o.MaxLiveBytes = n
	}
	for _, n := range []struct {
		name string
		dst  *int
		what string
	}{{"FORGE_POOL_SIZE", &o.SandboxPoolSize, "interpreters or wasm instances kept per program"},
		{"FORGE_MAX_WORKERS", &o.SandboxMaxWorkers, "worker processes in all (yaegi process isolation)"}} {
		if v := getenv(n.name); v != "" {
			k, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || k <= 0 {
				return o, fmt.Errorf("%s=%q: use a positive number of %s", n.name, v, n.what)
			}
			*n.dst = k
		}
	}
	if v := getenv("FORGE_IDLE_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil || d == 0 {
			return o, fmt.Errorf("FORGE_IDLE_TIMEOUT=%q: use a duration such as 30s or 5m (how long an extra interpreter or instance may idle), or -1s for never", v)
		}
		o.SandboxIdleTimeout = d
	}
	if v := getenv("FORGE_MAX_REPAIRS_BEFORE_REGEN"); v != "" {
		b, err := repair.ParseBudget(v)
		if err != nil {
			return o, fmt.Errorf("FORGE_MAX_REPAIRS_BEFORE_REGEN: %w", err)
		}
		o.Budget = b
	}
	o.LocalDir = strings.TrimSpace(getenv("FORGE_LOCAL_DIR"))
	if o.Maxima, err = maximaFromEnv(getenv); err != nil { // health hook: the contract limits' maxima
		return o, err
	}
	if o.Knowledge, err = knowledgeCapsFromEnv(getenv); err != nil { // knowledge hook: the caps
		return o, err
	}
	return o, nil
}

// parseBytes reads a byte budget: a size as sandbox.ParseSize reads it (512MiB, 2GiB or a number
// of bytes), or -1 for "no bound".
func parseBytes(v string) (int64, error) {
	if strings.TrimSpace(v) == "-1" {
		return -1, nil
	}
	n, err := sandbox.ParseSize(v)
	if err != nil {
		return 0, fmt.Errorf("%v; or -1 for no bound", err)
	}
	return n, nil
}
