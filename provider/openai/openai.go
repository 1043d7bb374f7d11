// Package openai generates artifacts through any OpenAI-compatible chat completions endpoint:
// OpenAI itself, or a local Ollama, vLLM or llama.cpp server selected with OPENAI_BASE_URL.
package openai

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/artifactforge/forge/internal/redact"
	"github.com/artifactforge/forge/provider/internal/gen"
)

// Name is the provider's name in specs, errors and events.
const Name = "openai"

// DefaultBaseURL is OpenAI's own endpoint, used when OPENAI_BASE_URL is unset.
const DefaultBaseURL = "https://api.openai.com/v1/"

// DefaultModel is used against OpenAI's own endpoint when FORGE_MODEL is unset; other servers
// name their models differently, so for them FORGE_MODEL is required.
const DefaultModel = string(shared.ChatModelGPT5_4Mini)

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
	Retry     gen.Retry     // the SDK's own retries are off; this policy replaces them
	CodeTool  bool          // offer a submit_code tool and require the model to call it
	// HTTPClient replaces the default client (tests, proxies).
	HTTPClient *http.Client
}

// FromEnv reads OPENAI_API_KEY, OPENAI_BASE_URL and the shared FORGE_* settings.
func FromEnv(env func(string) string) (Config, error) {
	e := gen.Env(env)
	c, err := gen.CommonFromEnv(Name, e)
	if err != nil {
		return Config{}, err
	}
	return Config{
		APIKey:    e.Get("OPENAI_API_KEY"),
		BaseURL:   e.Get("OPENAI_BASE_URL"),
		Model:     c.Model,
		MaxTokens: c.MaxTokens,
		Timeout:   c.Timeout,
		Retry:     c.Retry,
		CodeTool:  c.CodeTool,
	}, nil
}

// Provider asks a chat completions endpoint for code. It is safe for concurrent use.
type Provider struct {
	cfg      Config
	client   sdk.Client
	official bool // OpenAI's own endpoint: use max_completion_tokens instead of max_tokens
}

// New checks cfg and builds the client. Against OpenAI's own endpoint an API key is required;
// against any other base URL a model is.
func New(cfg Config) (*Provider, error) {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
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
		key = "unused" // local servers ignore it, but the SDK sends Authorization either way
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	client := sdk.NewClient(
		option.WithBaseURL(cfg.BaseURL),
		option.WithAPIKey(key),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0),
		option.WithRequestTimeout(cfg.Timeout),
	)
	return &Provider{cfg: cfg, client: client, official: official}, nil
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

func (p *Provider) once(ctx context.Context, req gen.Request) (gen.Answer, error) {
	model, maxTokens := req.Resolve(p.cfg.Model, p.cfg.MaxTokens)
	params := sdk.ChatCompletionNewParams{
		Model: shared.ChatModel(model),
		Messages: []sdk.ChatCompletionMessageParamUnion{
			sdk.SystemMessage(req.System),
			sdk.UserMessage(req.Prompt),
		},
	}
	if p.official {
		params.MaxCompletionTokens = sdk.Int(int64(maxTokens))
	} else {
		params.MaxTokens = sdk.Int(int64(maxTokens))
	}
	if p.cfg.CodeTool {
		params.Tools = []sdk.ChatCompletionToolUnionParam{sdk.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name:        gen.CodeToolName,
			Description: sdk.String(gen.CodeToolDescription),
			Parameters: shared.FunctionParameters{
				"type":       "object",
				"properties": gen.CodeToolProperties(),
				"required":   []string{"code"},
			},
		})}
		params.ToolChoice = sdk.ToolChoiceOptionFunctionToolChoice(sdk.ChatCompletionNamedToolChoiceFunctionParam{Name: gen.CodeToolName})
	}

	var httpRes *http.Response
	res, err := p.client.Chat.Completions.New(ctx, params, option.WithResponseInto(&httpRes))
	if err != nil {
		return gen.Answer{}, p.failure(ctx, err, httpRes)
	}
	ans := gen.Answer{Model: res.Model, Usage: gen.Usage{
		InputTokens:  int(res.Usage.PromptTokens),
		OutputTokens: int(res.Usage.CompletionTokens),
		CachedTokens: int(res.Usage.PromptTokensDetails.CachedTokens),
	}}
	if ans.Model == "" {
		ans.Model = model
	}
	if len(res.Choices) == 0 {
		return ans, gen.Errorf(gen.BadAnswer, Name, "the response has no choices")
	}
	choice := res.Choices[0]
	msg := choice.Message
	if msg.Refusal != "" && msg.Content == "" {
		ans.Raw = msg.Refusal
		return ans, gen.Errorf(gen.BadAnswer, Name, "the model refused: %s", msg.Refusal)
	}
	var toolArgs []string
	for _, tc := range msg.ToolCalls {
		if tc.Function.Arguments != "" {
			toolArgs = append(toolArgs, tc.Function.Arguments)
		}
	}
	if msg.FunctionCall.Arguments != "" {
		toolArgs = append(toolArgs, msg.FunctionCall.Arguments)
	}
	ans.Raw = strings.Join(append([]string{msg.Content}, toolArgs...), "\n")
	ans.Raw = strings.TrimPrefix(ans.Raw, "\n")
	var herr error
	for _, args := range toolArgs {
		if ans.Code, herr = gen.Heal(args); herr == nil {
			return ans, nil
		}
	}
	if ans.Code, herr = gen.Heal(msg.Content); herr == nil {
		return ans, nil
	}
	e := &gen.Error{Kind: gen.BadAnswer, Provider: Name, Err: herr}
	if choice.FinishReason == "length" {
		e.Message = fmt.Sprintf("the answer was cut off at %d tokens; raise FORGE_MAX_TOKENS", maxTokens)
	}
	return ans, e
}

// failure maps an SDK error to the provider error kinds.
func (p *Provider) failure(ctx context.Context, err error, httpRes *http.Response) error {
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		msg := apiErr.Message
		if msg == "" {
			msg = http.StatusText(apiErr.StatusCode)
		}
		var h http.Header
		if apiErr.Response != nil {
			h = apiErr.Response.Header
		}
		hint := Setup
		if apiErr.StatusCode == http.StatusNotFound {
			hint = fmt.Sprintf("check FORGE_MODEL=%q and OPENAI_BASE_URL=%q", p.cfg.Model, redact.URL(p.cfg.BaseURL))
		}
		return gen.StatusError(Name, apiErr.StatusCode, h, msg, nil, hint)
	}
	if ctx.Err() == nil && httpRes != nil && httpRes.StatusCode < 400 {
		return &gen.Error{Kind: gen.BadAnswer, Provider: Name, Status: httpRes.StatusCode, Message: "could not decode the response body", Err: err}
	}
	return gen.TransportError(Name, err)
}
