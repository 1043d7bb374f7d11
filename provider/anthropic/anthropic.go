// Package anthropic generates artifacts through the Anthropic Messages API. The stable system
// part of every request is sent as a cacheable system block, so repeated generations and
// repairs read it from the prompt cache.
package anthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/artifactforge/forge/internal/redact"
	"github.com/artifactforge/forge/provider/internal/gen"
)

// Name is the provider's name in specs, errors and events.
const Name = "anthropic"

// DefaultBaseURL is Anthropic's endpoint, used when ANTHROPIC_BASE_URL is unset.
const DefaultBaseURL = "https://api.anthropic.com/"

// APIVersion is the anthropic-version header every request carries: the Messages API version
// whose request and response format this package speaks.
const APIVersion = "2023-06-01"

// DefaultModel is used when FORGE_MODEL is unset.
const DefaultModel = "claude-sonnet-5-5"

// Setup says how to configure this provider; it ends every configuration error.
const Setup = "configure it with --provider anthropic (or FORGE_PROVIDER=anthropic) and ANTHROPIC_API_KEY; " +
	"FORGE_MODEL picks the model (default " + DefaultModel + "); ANTHROPIC_BASE_URL points at a proxy"

// Config is everything the provider needs; FromEnv fills it from the environment.
type Config struct {
	APIKey    string        // sent as x-api-key (ANTHROPIC_API_KEY); wins over AuthToken
	AuthToken string        // a bearer token instead of an API key (ANTHROPIC_AUTH_TOKEN)
	BaseURL   string        // DefaultBaseURL when empty
	Model     string        // DefaultModel when empty
	MaxTokens int           // answer size limit; gen.DefaultMaxTokens when 0
	Timeout   time.Duration // per HTTP attempt; gen.DefaultTimeout when 0
	Retry     gen.Retry     // the one retry policy of the HTTP providers
	CodeTool  bool          // offer a submit_code tool and require the model to call it
	// HTTPClient replaces the default client (tests, proxies).
	HTTPClient *http.Client
}

// FromEnv reads ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), ANTHROPIC_BASE_URL and the shared
// FORGE_* settings.
func FromEnv(env func(string) string) (Config, error) {
	e := gen.Env(env)
	c, err := gen.CommonFromEnv(Name, e)
	if err != nil {
		return Config{}, err
	}
	return Config{
		APIKey:    e.Get("ANTHROPIC_API_KEY"),
		AuthToken: e.Get("ANTHROPIC_AUTH_TOKEN"),
		BaseURL:   e.Get("ANTHROPIC_BASE_URL"),
		Model:     c.Model,
		MaxTokens: c.MaxTokens,
		Timeout:   c.Timeout,
		Retry:     c.Retry,
		CodeTool:  c.CodeTool,
	}, nil
}

// Provider asks the Messages API for code. It is safe for concurrent use.
type Provider struct {
	cfg      Config
	hc       *http.Client
	endpoint *url.URL // BaseURL + v1/messages
	header   http.Header
}

// New checks cfg and builds the client; it reads nothing from the process environment.
func New(cfg Config) (*Provider, error) {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	u, ok := gen.ParseBaseURL(cfg.BaseURL)
	if !ok {
		return nil, gen.Errorf(gen.Misconfigured, Name, "ANTHROPIC_BASE_URL=%q is not an http(s) URL; %s", redact.URL(cfg.BaseURL), Setup)
	}
	if cfg.APIKey == "" && cfg.AuthToken == "" {
		return nil, gen.Errorf(gen.Misconfigured, Name, "ANTHROPIC_API_KEY is not set; %s", Setup)
	}
	if cfg.Model == "" {
		cfg.Model = DefaultModel
	}
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = gen.DefaultMaxTokens
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = gen.DefaultTimeout
	}
	h := http.Header{}
	if cfg.APIKey != "" {
		h.Set("X-Api-Key", cfg.APIKey) // as the API documents API keys
	} else {
		h.Set("Authorization", "Bearer "+cfg.AuthToken)
	}
	h.Set("Anthropic-Version", APIVersion)
	h.Set("User-Agent", "forge")
	return &Provider{cfg: cfg, hc: gen.Client(cfg.HTTPClient), endpoint: gen.Endpoint(u, "v1/messages"), header: h}, nil
}

// Name reports "anthropic".
func (p *Provider) Name() string { return Name }

// Model reports the configured model.
func (p *Provider) Model() string { return p.cfg.Model }

// Generate sends System as a cached system block and Prompt as the user turn, then heals the
// answer into one Go file. Failures are *gen.Error (provider.Error); a healing failure returns
// the Answer (with Raw and Usage) alongside a BadAnswer error.
func (p *Provider) Generate(ctx context.Context, req gen.Request) (gen.Answer, error) {
	return p.cfg.Retry.Do(ctx, func(ctx context.Context) (gen.Answer, error) { return p.once(ctx, req) })
}

// request builds the Messages API body forge sends.
func (p *Provider) request(req gen.Request) messagesRequest {
	model, maxTokens := req.Resolve(p.cfg.Model, p.cfg.MaxTokens)
	body := messagesRequest{
		Model:     model,
		MaxTokens: maxTokens,
		Messages:  []message{{Role: "user", Content: []textBlock{{Type: "text", Text: req.Prompt}}}},
	}
	if strings.TrimSpace(req.System) != "" {
		body.System = []textBlock{{Type: "text", Text: req.System, CacheControl: &cacheControl{Type: "ephemeral"}}}
	}
	if p.cfg.CodeTool {
		body.Tools = []tool{{
			Name:        gen.CodeToolName,
			Description: gen.CodeToolDescription,
			InputSchema: map[string]any{"type": "object", "properties": gen.CodeToolProperties(), "required": []string{"code"}},
		}}
		body.ToolChoice = &toolChoice{Type: "tool", Name: gen.CodeToolName}
	}
	return body
}

func (p *Provider) once(ctx context.Context, req gen.Request) (gen.Answer, error) {
	body := p.request(req)
	hres, err := gen.PostJSON(ctx, Name, p.hc, p.endpoint, p.header, body, p.cfg.Timeout)
	if err != nil {
		return gen.Answer{}, err
	}
	if hres.Status >= 400 {
		return gen.Answer{}, p.failure(hres)
	}
	var res messagesResponse
	if err := json.Unmarshal(hres.Body, &res); err != nil {
		return gen.Answer{}, gen.DecodeError(Name, hres.Status, err)
	}
	u := res.Usage
	ans := gen.Answer{Model: res.Model, Usage: gen.Usage{
		InputTokens:  u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens,
		OutputTokens: u.OutputTokens,
		CachedTokens: u.CacheReadInputTokens,
	}}
	if ans.Model == "" {
		ans.Model = body.Model
	}
	var texts, inputs []string
	for _, b := range res.Content {
		switch b.Type {
		case "text":
			texts = append(texts, b.Text)
		case "tool_use":
			inputs = append(inputs, string(b.Input))
		}
	}
	text := strings.Join(texts, "\n")
	ans.Raw = strings.Join(append(append([]string{}, texts...), inputs...), "\n")
	if res.StopReason == "refusal" && len(inputs) == 0 {
		return ans, gen.Errorf(gen.BadAnswer, Name, "the model refused: %s", text)
	}
	if len(texts) == 0 && len(inputs) == 0 {
		return ans, gen.Errorf(gen.BadAnswer, Name, "the response has no text or tool_use content")
	}
	var herr error
	for _, in := range inputs {
		if ans.Code, herr = gen.Heal(in); herr == nil {
			return ans, nil
		}
	}
	if ans.Code, herr = gen.Heal(text); herr == nil {
		return ans, nil
	}
	e := &gen.Error{Kind: gen.BadAnswer, Provider: Name, Err: herr}
	if res.StopReason == "max_tokens" {
		e.Message = fmt.Sprintf("the answer was cut off at %d tokens; raise FORGE_MAX_TOKENS", body.MaxTokens)
	}
	return ans, e
}

// failure maps an HTTP error response to the provider error kinds (gen.KindForStatus), with the
// type and message of the API's error envelope ("overloaded_error Overloaded").
func (p *Provider) failure(res *gen.Response) error {
	var env errorEnvelope
	_ = json.Unmarshal(res.Body, &env) // a proxy's HTML page leaves it empty
	msg := strings.TrimSpace(env.Error.Type + " " + env.Error.Message)
	if msg == "" {
		msg = http.StatusText(res.Status)
	}
	hint := Setup
	if res.Status == http.StatusNotFound {
		hint = fmt.Sprintf("check FORGE_MODEL=%q and ANTHROPIC_BASE_URL=%q", p.cfg.Model, redact.URL(p.cfg.BaseURL))
	}
	return gen.StatusError(Name, res.Status, res.Header, msg, nil, hint)
}
