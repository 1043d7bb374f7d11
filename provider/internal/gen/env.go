package gen

import (
	"strconv"
	"strings"
	"time"
)

// Env reads configuration; provider.Open passes os.Getenv or a test's map.
type Env func(string) string

// Get returns the trimmed value of key, or "" when env is nil.
func (e Env) Get(key string) string {
	if e == nil {
		return ""
	}
	return strings.TrimSpace(e(key))
}

// Int reads a non-negative integer setting, def when unset.
func (e Env) Int(name, key string, def int) (int, error) {
	v := e.Get(key)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, Errorf(Misconfigured, name, "%s=%q is not a non-negative integer", key, v)
	}
	return n, nil
}

// Duration reads a positive duration setting ("90s", "2m", or plain seconds), def when unset.
func (e Env) Duration(name, key string, def time.Duration) (time.Duration, error) {
	v := e.Get(key)
	if v == "" {
		return def, nil
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
		return time.Duration(s * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, Errorf(Misconfigured, name, "%s=%q is not a positive duration (e.g. 90s, 2m)", key, v)
	}
	return d, nil
}

// Bool reads an on/off setting ("1", "true", "yes", "on").
func (e Env) Bool(key string) bool {
	switch strings.ToLower(e.Get(key)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// The settings every provider shares.
const (
	EnvProvider = "FORGE_PROVIDER"
	EnvModel    = "FORGE_MODEL"
	EnvMaxTok   = "FORGE_MAX_TOKENS"
	EnvTimeout  = "FORGE_PROVIDER_TIMEOUT"
	EnvRetries  = "FORGE_PROVIDER_RETRIES"
	EnvCodeTool = "FORGE_CODE_TOOL"
)

// DefaultMaxTokens bounds an answer when neither the request nor FORGE_MAX_TOKENS says.
const DefaultMaxTokens = 4096

// DefaultTimeout bounds one HTTP attempt or one command run.
const DefaultTimeout = 2 * time.Minute

// Common is the part of every HTTP provider's configuration read from the shared settings.
type Common struct {
	Model     string
	MaxTokens int
	Timeout   time.Duration
	Retry     Retry
	CodeTool  bool
}

// CommonFromEnv reads FORGE_MODEL, FORGE_MAX_TOKENS, FORGE_PROVIDER_TIMEOUT,
// FORGE_PROVIDER_RETRIES and FORGE_CODE_TOOL.
func CommonFromEnv(name string, env Env) (Common, error) {
	c := Common{Model: env.Get(EnvModel), Retry: DefaultRetry, CodeTool: env.Bool(EnvCodeTool)}
	var err error
	if c.MaxTokens, err = env.Int(name, EnvMaxTok, DefaultMaxTokens); err != nil {
		return c, err
	}
	if c.Timeout, err = env.Duration(name, EnvTimeout, DefaultTimeout); err != nil {
		return c, err
	}
	if c.Retry.MaxRetries, err = env.Int(name, EnvRetries, DefaultRetry.MaxRetries); err != nil {
		return c, err
	}
	return c, nil
}

// The tool offered when FORGE_CODE_TOOL is on: the model hands the file over as a function
// call argument instead of a fenced block, which some models follow more reliably.
const (
	CodeToolName        = "submit_code"
	CodeToolDescription = "Submit the complete Go source file (package artifact) that implements the requested method."
)

// CodeToolProperties is the JSON Schema properties of the tool's single argument.
func CodeToolProperties() map[string]any {
	return map[string]any{
		"code": map[string]any{
			"type":        "string",
			"description": "The whole Go file, starting with `package artifact`.",
		},
	}
}
