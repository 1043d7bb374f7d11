// Package gen holds what the code generators share: the data types (provider re-exports them as
// aliases, so users never import gen) and the helpers of their implementations (settings from
// env, HTTP with retries, healing an answer), which stay out of provider's public API.
package gen

// Kind says why the generator is asked: a first version or a fix of a failing one.
type Kind string

// The request kinds a cassette and the event log record.
const (
	Generate Kind = "generate"
	Repair   Kind = "repair"
)

// Valid reports whether k is a known request kind.
func (k Kind) Valid() bool { return k == Generate || k == Repair }

// Request is one question to a code generator. System is the stable part of the prompt
// (artifact rules, host API, sandbox gaps) kept separate so providers can cache it; Prompt is
// what changes per method (contract, signature and, for a repair, the failing code and error).
type Request struct {
	Kind   Kind
	Role   string
	Method string
	// Attempt is the 1-based number of this request within one forge call (1..the call's
	// provider-call budget): 2 follows gate feedback on attempt 1. 0 means the caller does not
	// number its requests.
	Attempt   int
	System    string
	Prompt    string
	Model     string // overrides the provider's configured model when set
	MaxTokens int    // overrides the provider's configured answer size when > 0
}

// Resolve returns the model and answer size for this request: its own overrides where set, else
// the provider's configured ones.
func (r Request) Resolve(model string, maxTokens int) (string, int) {
	if r.Model != "" {
		model = r.Model
	}
	if r.MaxTokens > 0 {
		maxTokens = r.MaxTokens
	}
	return model, maxTokens
}

// Usage is what the provider reported it consumed. InputTokens counts every prompt token,
// cached or not; CachedTokens is the part served from the provider's prompt cache.
type Usage struct {
	InputTokens  int `json:"input_tokens,omitempty"`
	OutputTokens int `json:"output_tokens,omitempty"`
	CachedTokens int `json:"cached_tokens,omitempty"`
}

// Add returns the sum of two usages, for callers that total a call's provider requests.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens:  u.InputTokens + v.InputTokens,
		OutputTokens: u.OutputTokens + v.OutputTokens,
		CachedTokens: u.CachedTokens + v.CachedTokens,
	}
}

// Answer is a generator's reply: Code is healed Go source (one file, package artifact); Raw is
// the text (or tool-call arguments) the model actually produced, kept for the event log and
// for feedback when healing fails.
type Answer struct {
	Code  string
	Raw   string
	Model string
	Usage Usage
}
