// Package anthropic generates artifacts through the Anthropic Messages API. The stable system
// part of every request is sent as a cacheable system block, so repeated generations and
// repairs read it from the prompt cache.
package anthropic

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/artifactforge/forge/provider/internal/gen"
)

// Name is the provider's name in specs, errors and events.
const Name = "anthropic"

// DefaultBaseURL is Anthropic's endpoint, used when ANTHROPIC_BASE_URL is unset.
const DefaultBaseURL = "https://api.anthropic.com/"

// DefaultModel is used when FORGE_MODEL is unset.
const DefaultModel = string(sdk.ModelClaudeSonnet5_5)

// Setup says how to configure this provider; it ends every configuration error.
const Setup = "configure it with --provider anthropic (or FORGE_PROVIDER=anthropic) and ANTHROPIC_API_KEY; " +
	"FORGE_MODEL picks the model (default " + DefaultModel + "); ANTHROPIC_BASE_URL points at a proxy"

// Config is everything the provider needs; FromEnv fills it from the environment.
type Config struct {
	APIKey    string
	AuthToken string        // a bearer token instead of an API key (ANTHROPIC_AUTH_TOKEN)
	BaseURL   string        // DefaultBaseURL when empty
	Model     string        // DefaultModel when empty
	MaxTokens int           // answer size limit; gen.DefaultMaxTokens when 0
	Timeout   time.Duration // per HTTP attempt; gen.DefaultTimeout when 0
	Retry     gen.Retry     // the SDK's own retries are off; this policy replaces them
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
	cfg    Config
	client sdk.Client
}

// New checks cfg and builds the client; it reads nothing from the process environment.
func New(cfg Config) (*Provider, error) {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, gen.Errorf(gen.Misconfigured, Name, "ANTHROPIC_BASE_URL=%q is not an http(s) URL; %s", cfg.BaseURL, Setup)
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
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(cfg.BaseURL),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0),
		option.WithRequestTimeout(cfg.Timeout),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	} else {
		opts = append(opts, option.WithAuthToken(cfg.AuthToken))
	}
	return &Provider{cfg: cfg, client: sdk.NewClient(opts...)}, nil
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

func (p *Provider) once(ctx context.Context, req gen.Request) (gen.Answer, error) {
	model, maxTokens := req.Resolve(p.cfg.Model, p.cfg.MaxTokens)
	params := sdk.MessageNewParams{
		Model:     sdk.Model(model),
		MaxTokens: int64(maxTokens),
		Messages:  []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock(req.Prompt))},
	}
	if strings.TrimSpace(req.System) != "" {
		params.System = []sdk.TextBlockParam{{Text: req.System, CacheControl: sdk.NewCacheControlEphemeralParam()}}
	}
	if p.cfg.CodeTool {
		params.Tools = []sdk.ToolUnionParam{{OfTool: &sdk.ToolParam{
			Name:        gen.CodeToolName,
			Description: sdk.String(gen.CodeToolDescription),
			InputSchema: sdk.ToolInputSchemaParam{Properties: gen.CodeToolProperties(), Required: []string{"code"}},
		}}}
		params.ToolChoice = sdk.ToolChoiceParamOfTool(gen.CodeToolName)
	}

	var httpRes *http.Response
	res, err := p.client.Messages.New(ctx, params, option.WithResponseInto(&httpRes))
	if err != nil {
		return gen.Answer{}, p.failure(ctx, err, httpRes)
	}
	u := res.Usage
	ans := gen.Answer{Model: string(res.Model), Usage: gen.Usage{
		InputTokens:  int(u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens),
		OutputTokens: int(u.OutputTokens),
		CachedTokens: int(u.CacheReadInputTokens),
	}}
	if ans.Model == "" {
		ans.Model = model
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
		e.Message = fmt.Sprintf("the answer was cut off at %d tokens; raise FORGE_MAX_TOKENS", maxTokens)
	}
	return ans, e
}

// failure maps an SDK error to the provider error kinds.
func (p *Provider) failure(ctx context.Context, err error, httpRes *http.Response) error {
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		msg := apiErr.Message
		if t := string(apiErr.Type()); t != "" {
			msg = strings.TrimSpace(t + " " + msg)
		}
		if msg == "" {
			msg = http.StatusText(apiErr.StatusCode)
		}
		var h http.Header
		if apiErr.Response != nil {
			h = apiErr.Response.Header
		}
		hint := Setup
		if apiErr.StatusCode == http.StatusNotFound {
			hint = fmt.Sprintf("check FORGE_MODEL=%q and ANTHROPIC_BASE_URL=%q", p.cfg.Model, p.cfg.BaseURL)
		}
		return gen.StatusError(Name, apiErr.StatusCode, h, msg, nil, hint)
	}
	if ctx.Err() == nil && httpRes != nil && httpRes.StatusCode < 400 {
		return &gen.Error{Kind: gen.BadAnswer, Provider: Name, Status: httpRes.StatusCode, Message: "could not decode the response body", Err: err}
	}
	return gen.TransportError(Name, err)
}
