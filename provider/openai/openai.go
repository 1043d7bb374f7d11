// Package openai generates artifacts through any OpenAI-compatible chat completions endpoint:
// OpenAI itself, or a local Ollama, vLLM or llama.cpp server selected with OPENAI_BASE_URL.
package openai

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
const Name = "openai"

// DefaultBaseURL is OpenAI's own endpoint, used when OPENAI_BASE_URL is unset.
const DefaultBaseURL = "https://api.openai.com/v1/"

// DefaultModel is used against OpenAI's own endpoint when FORGE_MODEL is unset; other servers
// name their models differently, so for them FORGE_MODEL is required.
const DefaultModel = "gpt-5.4-mini"

// Setup says how to configure this provider; it ends every configuration error.
const Setup = "configure it with --provider openai (or FORGE_PROVIDER=openai) and OPENAI_API_KEY; " +
	"FORGE_MODEL picks the model; OPENAI_BASE_URL points at an OpenAI-compatible server " +
	"(Ollama: http://localhost:11434/v1, vLLM: http://localhost:8000/v1, llama.cpp: http://localhost:8080/v1; no key needed there)"

// Config is everything the provider needs; FromEnv fills it from the environment.
type Config struct {
	APIKey    string
	BaseURL   string        // DefaultBaseURL when empty
	Model     string        // DefaultModel when empty against OpenAI; required elsewhere
	MaxTokens int           // answer size limit; gen.DefaultMaxTokens when 0
	Timeout   time.Duration // per HTTP attempt; gen.DefaultTimeout when 0
	Retry     gen.Retry     // the one retry policy of the HTTP providers
	// Organization and Project, when set, are sent as OpenAI-Organization and OpenAI-Project
	// (OPENAI_ORG_ID, OPENAI_PROJECT_ID): which organization and project a request counts against.
	Organization string
	Project      string
	// Headers are sent with every request (OPENAI_CUSTOM_HEADERS, one "Name: value" a line), e.g.
	// what a gateway in front of the API wants; they cannot replace the credential headers.
	Headers  map[string]string
	CodeTool bool // offer a submit_code tool and require the model to call it
	// HTTPClient replaces the default client (tests, proxies).
	HTTPClient *http.Client
}

// FromEnv reads OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_ORG_ID, OPENAI_PROJECT_ID,
// OPENAI_CUSTOM_HEADERS and the shared FORGE_* settings.
func FromEnv(env func(string) string) (Config, error) {
	e := gen.Env(env)
	c, err := gen.CommonFromEnv(Name, e)
	if err != nil {
		return Config{}, err
	}
	return Config{
		APIKey:       e.Get("OPENAI_API_KEY"),
		BaseURL:      e.Get("OPENAI_BASE_URL"),
		Organization: e.Get("OPENAI_ORG_ID"),
		Project:      e.Get("OPENAI_PROJECT_ID"),
		Headers:      customHeaders(e.Get("OPENAI_CUSTOM_HEADERS")),
		Model:        c.Model,
		MaxTokens:    c.MaxTokens,
		Timeout:      c.Timeout,
		Retry:        c.Retry,
		CodeTool:     c.CodeTool,
	}, nil
}

// customHeaders parses OPENAI_CUSTOM_HEADERS as openai-go did: one "Name: value" a line, lines
// without a colon ignored.
func customHeaders(v string) map[string]string {
	var h map[string]string
	for _, line := range strings.Split(v, "\n") {
		name, value, ok := strings.Cut(line, ":")
		if name = strings.TrimSpace(name); !ok || name == "" {
			continue
		}
		if h == nil {
			h = map[string]string{}
		}
		h[name] = strings.TrimSpace(value)
	}
	return h
}

// Provider asks a chat completions endpoint for code. It is safe for concurrent use.
type Provider struct {
	cfg      Config
	hc       *http.Client
	endpoint *url.URL // BaseURL + chat/completions
	header   http.Header
	official bool // OpenAI's own endpoint: use max_completion_tokens instead of max_tokens
}

// New checks cfg and builds the client. Against OpenAI's own endpoint an API key is required;
// against any other base URL a model is.
func New(cfg Config) (*Provider, error) {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	u, ok := gen.ParseBaseURL(cfg.BaseURL)
	if !ok {
		return nil, gen.Errorf(gen.Misconfigured, Name, "OPENAI_BASE_URL=%q is not an http(s) URL; %s", redact.URL(cfg.BaseURL), Setup)
	}
	official := strings.EqualFold(u.Hostname(), "api.openai.com")
	if official && cfg.APIKey == "" {
		return nil, gen.Errorf(gen.Misconfigured, Name, "OPENAI_API_KEY is not set; %s", Setup)
	}
	if cfg.Model == "" {
		if !official {
			return nil, gen.Errorf(gen.Misconfigured, Name, "FORGE_MODEL is not set for %s (e.g. FORGE_MODEL=qwen2.5-coder:7b); %s", redact.URL(cfg.BaseURL), Setup)
		}
		cfg.Model = DefaultModel
	}
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = gen.DefaultMaxTokens
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = gen.DefaultTimeout
	}
	key := cfg.APIKey
	if key == "" {
		key = "unused" // local servers ignore it; some proxies insist on the header being there
	}
	h := http.Header{}
	h.Set("User-Agent", "forge")
	for k, v := range cfg.Headers {
		h.Set(k, v)
	}
	h.Set("Authorization", "Bearer "+key)
	if cfg.Organization != "" {
		h.Set("OpenAI-Organization", cfg.Organization)
	}
	if cfg.Project != "" {
		h.Set("OpenAI-Project", cfg.Project)
	}
	return &Provider{cfg: cfg, hc: gen.Client(cfg.HTTPClient), endpoint: gen.Endpoint(u, "chat/completions"), header: h, official: official}, nil
}

// Name reports "openai".
func (p *Provider) Name() string { return Name }

// Model reports the configured model.
func (p *Provider) Model() string { return p.cfg.Model }

// Generate sends System as the system message and Prompt as the user message, then heals the
// answer into one Go file. Failures are *gen.Error (provider.Error); a healing failure returns
// the Answer (with Raw and Usage) alongside a BadAnswer error.
func (p *Provider) Generate(ctx context.Context, req gen.Request) (gen.Answer, error) {
	return p.cfg.Retry.Do(ctx, func(ctx context.Context) (gen.Answer, error) { return p.once(ctx, req) })
}

// request builds the chat completions body forge sends.
func (p *Provider) request(req gen.Request) (chatRequest, int) {
	model, maxTokens := req.Resolve(p.cfg.Model, p.cfg.MaxTokens)
	body := chatRequest{
		Model:    model,
		Messages: []chatMessage{{Role: "system", Content: req.System}, {Role: "user", Content: req.Prompt}},
	}
	n := maxTokens
	if p.official {
		body.MaxCompletionTokens = &n
	} else {
		body.MaxTokens = &n
	}
	if p.cfg.CodeTool {
		body.Tools = []chatTool{{Type: "function", Function: chatFunction{
			Name:        gen.CodeToolName,
			Description: gen.CodeToolDescription,
			Parameters: map[string]any{
				"type":       "object",
				"properties": gen.CodeToolProperties(),
				"required":   []string{"code"},
			},
		}}}
		body.ToolChoice = &chatToolChoice{Type: "function", Function: chatToolChoiceFunction{Name: gen.CodeToolName}}
	}
	return body, maxTokens
}

func (p *Provider) once(ctx context.Context, req gen.Request) (gen.Answer, error) {
	body, maxTokens := p.request(req)
	hres, err := gen.PostJSON(ctx, Name, p.hc, p.endpoint, p.header, body, p.cfg.Timeout)
	if err != nil {
		return gen.Answer{}, err
	}
	if hres.Status >= 400 {
		return gen.Answer{}, p.failure(hres)
	}
	var res chatResponse
	if err := json.Unmarshal(hres.Body, &res); err != nil {
		return gen.Answer{}, gen.DecodeError(Name, hres.Status, err)
	}
	ans := gen.Answer{Model: res.Model, Usage: gen.Usage{
		InputTokens:  res.Usage.PromptTokens,
		OutputTokens: res.Usage.CompletionTokens,
		CachedTokens: res.Usage.PromptTokensDetails.CachedTokens,
	}}
	if ans.Model == "" {
		ans.Model = body.Model
	}
	if len(res.Choices) == 0 {
		return ans, gen.Errorf(gen.BadAnswer, Name, "the response has no choices")
	}
	choice := res.Choices[0]
	msg := choice.Message
	content := msg.Content.text()
	if msg.Refusal != "" && content == "" {
		ans.Raw = msg.Refusal
		return ans, gen.Errorf(gen.BadAnswer, Name, "the model refused: %s", msg.Refusal)
	}
	var toolArgs []string
	for _, tc := range msg.ToolCalls {
		if tc.Function.Arguments != "" {
			toolArgs = append(toolArgs, tc.Function.Arguments)
		}
	}
	if msg.FunctionCall != nil && msg.FunctionCall.Arguments != "" {
		toolArgs = append(toolArgs, msg.FunctionCall.Arguments)
	}
	ans.Raw = strings.Join(append([]string{content}, toolArgs...), "\n")
	ans.Raw = strings.TrimPrefix(ans.Raw, "\n")
	var herr error
	for _, args := range toolArgs {
		if ans.Code, herr = gen.Heal(args); herr == nil {
			return ans, nil
		}
	}
	if ans.Code, herr = gen.Heal(content); herr == nil {
		return ans, nil
	}
	e := &gen.Error{Kind: gen.BadAnswer, Provider: Name, Err: herr}
	if choice.FinishReason == "length" {
		e.Message = fmt.Sprintf("the answer was cut off at %d tokens; raise FORGE_MAX_TOKENS", maxTokens)
	}
	return ans, e
}

// failure maps an HTTP error response to the provider error kinds (gen.KindForStatus), with the
// message of the API's error envelope.
func (p *Provider) failure(res *gen.Response) error {
	msg := errorMessage(res.Body)
	if msg == "" {
		msg = http.StatusText(res.Status)
	}
	hint := Setup
	if res.Status == http.StatusNotFound {
		hint = fmt.Sprintf("check FORGE_MODEL=%q and OPENAI_BASE_URL=%q", p.cfg.Model, redact.URL(p.cfg.BaseURL))
	}
	return gen.StatusError(Name, res.Status, res.Header, msg, nil, hint)
}
