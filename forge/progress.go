package forge

import (
	"context"
	"fmt"
	"time"

	"github.com/artifactforge/forge/provider"
)

// Generation steps: what a call that writes code (generate, repair, regenerate) is doing while
// its caller waits, seconds at a time for a model's answer. A caller that wants to show them
// (the CLI on a terminal, an MCP client that sent a progress token) passes a func with
// WithProgress; `forge serve`'s /v1/events streams them as LiveGeneration events. A call served by
// persisted code has no steps, and the warm path never looks for a progress func.
const (
	StepAsking    = "asking"    // a provider call started: the model is writing code
	StepAnswered  = "answered"  // the model answered; its code is verified next
	StepRejected  = "rejected"  // the answer failed verification (or held no code): the model is asked again
	StepPersisted = "persisted" // the verified code is the current generation
	StepFailed    = "failed"    // no answer passed, or a step failed for a reason that is not the code's
)

// GenerationStep is one step of a call's generation.
type GenerationStep struct {
	Role   string `json:"role"`
	Method string `json:"method"`
	// TraceID and CallID are the call's that leads the generation (its event has the same).
	TraceID ID `json:"trace_id"`
	CallID  ID `json:"call_id"`
	// Step is one of the Step constants.
	Step string `json:"step"`
	// Attempt is the provider call the step belongs to (1..MaxAttempts).
	Attempt     int `json:"attempt"`
	MaxAttempts int `json:"max_attempts"`
	// Elapsed is the time since the generation started.
	Elapsed time.Duration `json:"elapsed"`
	// Message says what happens, for a person: what is being waited for, why an answer is
	// asked again.
	Message string `json:"message"`

	// client is the client whose call leads the generation (ClientFrom); withheld, when set, is
	// Message without the failure's text, which may echo that client's input: what another
	// client's event stream gets (StepFor).
	client, withheld string
}

// StepFor is step as a subscriber that is client viewer may read it: a failure's text (which
// may echo the input of the call that led the generation) reaches only that call's client, the
// operator and a forge without client identities (viewer ""); another client reads the step
// without it.
func StepFor(viewer string, step *GenerationStep) *GenerationStep {
	if viewer == "" || step.withheld == "" || viewer == step.client {
		return step
	}
	g := *step
	g.Message, g.withheld = g.withheld, ""
	return &g
}

type progressKey struct{}

// WithProgress returns ctx carrying fn: a call made with it calls fn with each step of a
// generation it leads, synchronously (fn must not block for long; it must not call the forge).
func WithProgress(ctx context.Context, fn func(GenerationStep)) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

func progressOf(ctx context.Context) func(GenerationStep) {
	fn, _ := ctx.Value(progressKey{}).(func(GenerationStep))
	return fn
}

// stepper reports one generation's steps to the caller's progress func and the live hub.
type stepper struct {
	f     *Forge
	fn    func(GenerationStep)
	base  GenerationStep
	start time.Time
}

func (c *call) stepper(ctx context.Context) *stepper {
	return &stepper{f: c.f, fn: progressOf(ctx), start: time.Now(),
		base: GenerationStep{Role: c.role, Method: c.method, TraceID: c.ev.TraceID, CallID: c.ev.CallID, MaxAttempts: c.f.opts.MaxProviderCalls,
			client: ClientFrom(ctx)}}
}

func (s *stepper) step(step string, attempt int, format string, args ...any) {
	s.stepWithheld(step, attempt, "", format, args...)
}

// stepWithheld is step with withheld, the message without a failure's text (GenerationStep).
func (s *stepper) stepWithheld(step string, attempt int, withheld, format string, args ...any) {
	h := s.f.hub()
	if s.fn == nil && h.n.Load() == 0 {
		return // nobody listens: nothing is formatted
	}
	g := s.base
	g.Step, g.Attempt, g.Elapsed = step, attempt, time.Since(s.start)
	g.Message, g.withheld = fmt.Sprintf(format, args...), withheld
	if s.fn != nil {
		s.fn(g)
	}
	h.publishStep(&LiveEvent{Kind: LiveGeneration, Time: s.f.now().UTC(), Generation: &g})
}

// publishStep sends a generation step to the subscribers (the event streams); the observers
// (metrics) count calls and changes, which a step is not.
func (h *liveHub) publishStep(e *LiveEvent) {
	if h.n.Load() == 0 {
		return
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	for s := range h.subs {
		if !s.filter.Match(e) {
			continue
		}
		if g := StepFor(s.filter.Viewer, e.Generation); g != e.Generation {
			h.send(s, &LiveEvent{Kind: e.Kind, Time: e.Time, Generation: g})
			continue
		}
		h.send(s, e)
	}
}

// asking reports a provider call about to start; last is the failure of the answer before it.
func (s *stepper) asking(p provider.Provider, kind provider.Kind, attempt int, last *failure) {
	if s.fn == nil && s.f.hub().n.Load() == 0 {
		return
	}
	if last != nil {
		again := fmt.Sprintf("asking the model again (attempt %d of %d)", attempt, s.base.MaxAttempts)
		s.stepWithheld(StepRejected, attempt-1, fmt.Sprintf("answer %d of the model was not usable (%s/%s%s); %s", attempt-1, last.result.Class, last.result.Rule, withheldNote, again),
			"answer %d of the model was not usable (%s/%s): %s; %s", attempt-1, last.result.Class, last.result.Rule, oneLineMsg(last.msg, 300), again)
	}
	s.step(StepAsking, attempt, "waiting for the model (%s) to write %s.%s (%s, attempt %d of %d)", p.Name(), s.base.Role, s.base.Method, kind, attempt, s.base.MaxAttempts)
}

// answered reports an answer about to be verified.
func (s *stepper) answered(attempt int) {
	s.step(StepAnswered, attempt, "verifying the model's answer %d for %s.%s (compile, acceptance examples, the call's own args)", attempt, s.base.Role, s.base.Method)
}

// finished reports how the generation ended.
func (s *stepper) finished(res *produced) {
	if res == nil || (s.fn == nil && s.f.hub().n.Load() == 0) {
		return
	}
	took := time.Since(s.start).Round(time.Millisecond)
	switch {
	case res.saved && res.fail == nil:
		s.step(StepPersisted, 0, "%s.%s generation %d is verified and current (%s)", s.base.Role, s.base.Method, res.art.Generation, took)
	case res.saved:
		s.stepWithheld(StepPersisted, 0, fmt.Sprintf("%s.%s generation %d is verified and current (%s); this call's own run of it failed (%s%s)",
			s.base.Role, s.base.Method, res.art.Generation, took, res.fail.result.Class, withheldNote),
			"%s.%s generation %d is verified and current (%s); this call's own run of it failed: %s",
			s.base.Role, s.base.Method, res.art.Generation, took, oneLineMsg(res.fail.msg, 300))
	case res.fail == nil && res.art != nil:
		s.step(StepPersisted, 0, "%s.%s: the code is verified; nothing was persisted (generate-only) (%s)", s.base.Role, s.base.Method, took)
	case res.fail != nil:
		s.stepWithheld(StepFailed, 0, fmt.Sprintf("%s.%s: the generation failed (%s/%s%s)", s.base.Role, s.base.Method, res.fail.result.Class, res.fail.result.Rule, withheldNote),
			"%s.%s: %s", s.base.Role, s.base.Method, oneLineMsg(res.fail.msg, 300))
	}
}

// oneLineMsg cuts a failure message to one line of at most n bytes for a progress line.
func oneLineMsg(msg string, n int) string {
	for i := 0; i < len(msg); i++ {
		if msg[i] == '\n' {
			msg = msg[:i] + " …"
			break
		}
	}
	if len(msg) > n {
		msg = msg[:n] + "…"
	}
	return msg
}
