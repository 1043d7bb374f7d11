package forge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/artifactforge/forge/classifier"
	"github.com/artifactforge/forge/internal/jsonval"
	"github.com/artifactforge/forge/registry"
	"github.com/artifactforge/forge/sandbox"
)

// Shadow verification (safe regeneration): before new code is promoted, after the gate, it
// replays the sample of real calls the current generation answered (sample.go) and compares the
// answers. What changed is classified (ReplayKind) and ShadowPolicy decides whether the new code
// may be promoted.

// ReplayKind classifies one sampled input replayed on new code.
type ReplayKind string

const (
	ReplaySame        ReplayKind = "same"         // the same answer (a value, or an error again)
	ReplayFixed       ReplayKind = "fixed"        // the failing call's own input now answers otherwise (expected)
	ReplayNowSucceeds ReplayKind = "now_succeeds" // an answer that was an error is now a value
	ReplayChanged     ReplayKind = "changed"      // a value that differs, or a value that is now an error
	ReplaySkipped     ReplayKind = "skipped"      // the replay could not judge it (an outage, a deadline)
)

// DefaultMaxChangedPercent: for an artifact that is not blessed, new code that changes the
// answers of more than this share of the sampled inputs is not promoted (the contract's
// sample.max_changed_percent overrides it).
const DefaultMaxChangedPercent = 10

// maxReplayDiffs bounds the differences an Outcome and an error message show.
const maxReplayDiffs = 5

// ClassifyReplay compares a sampled answer (wasValue or wasErr) with the new code's (now or
// nowErr). failing is the args of the call whose failure asked for the new code (nil: none).
func ClassifyReplay(args, failing, wasValue json.RawMessage, wasErr string, now json.RawMessage, nowErr string) ReplayKind {
	k := ClassifyAnswers(wasValue, wasErr, now, nowErr)
	switch {
	case k == ReplaySame:
		return k
	case failing != nil && jsonval.Equal(args, failing):
		return ReplayFixed
	case k == ReplayNowFails:
		return ReplayChanged // a regeneration's policy counts it as a changed answer
	}
	return k
}

// ShadowInput is what ShadowPolicy decides on.
type ShadowInput struct {
	Blessed       bool // the artifact the new code replaces is blessed
	AcceptChanges bool // an operator accepted changed answers (--accept-changes)
	// ContractChanged: the sample was answered under another contract (its fingerprint changed
	// since): changed answers may be what the new contract asks, so they are reported, never
	// blocking.
	ContractChanged bool
	Replayed        int // sampled inputs replayed and judged (skipped ones excluded)
	Changed         int
	// MaxChangedPercent for an artifact that is not blessed (0: DefaultMaxChangedPercent;
	// negative: no threshold).
	MaxChangedPercent int
	// ByClient splits Replayed and Changed by the named client whose call offered each sampled
	// input (registry.SampleEntry.Client); inputs of no named client are not in it.
	ByClient []ClientReplay
}

// ClientReplay is one client's part of a replay: the sampled inputs its calls offered, and how
// many of them the new code answers otherwise.
type ClientReplay struct {
	Client            string
	Replayed, Changed int
}

// ShadowPolicy decides whether new code whose replay changed in.Changed answers may be promoted,
// and if not, why. Answers that now succeed or are the failing input's never block. No single
// named client decides the threshold: changed answers block only if they are over it without the
// inputs of any one client that has changed answers, so that one client cannot fill the sample
// with distinct inputs that buggy code answers wrongly and so keep every repair from promotion.
// A blessed artifact keeps its rule (any change blocks): blessing is the operator's decision.
func ShadowPolicy(in ShadowInput) (block bool, why string) {
	switch {
	case in.Changed == 0 || in.AcceptChanges || in.ContractChanged:
		return false, ""
	case in.Blessed:
		return true, fmt.Sprintf("the artifact is blessed and the new code changes %d of %d sampled answers", in.Changed, in.Replayed)
	}
	max := in.MaxChangedPercent
	if max == 0 {
		max = DefaultMaxChangedPercent
	}
	over := func(changed, replayed int) bool { return changed*100 > max*replayed }
	if max <= 0 || !over(in.Changed, in.Replayed) {
		return false, ""
	}
	for _, c := range in.ByClient {
		if c.Changed > 0 && !over(in.Changed-c.Changed, in.Replayed-c.Replayed) {
			return false, "" // over the threshold only with client c's inputs: c alone does not block
		}
	}
	return true, fmt.Sprintf("the new code changes %d of %d sampled answers, more than %d%%", in.Changed, in.Replayed, max)
}

// ReplayDiff is one sampled input whose answer the new code does not keep.
type ReplayDiff struct {
	Kind   ReplayKind      `json:"kind"`
	Args   json.RawMessage `json:"args"`
	Was    json.RawMessage `json:"was,omitempty"`
	WasErr string          `json:"was_error,omitempty"`
	Now    json.RawMessage `json:"now,omitempty"`
	NowErr string          `json:"now_error,omitempty"`
	// client is the client whose call offered the input (registry.SampleEntry.Client): who may
	// be shown it (call.shown).
	client string
}

func (d ReplayDiff) String() string {
	return fmt.Sprintf("%s, now %s", d.Answer(), answerText(d.Now, d.NowErr))
}

// Answer is the sampled input and its recorded answer: `args {...}: was "X"`.
func (d ReplayDiff) Answer() string {
	return fmt.Sprintf("args %s: was %s", d.Args, answerText(d.Was, d.WasErr))
}

func answerText(v json.RawMessage, err string) string {
	if err != "" {
		return fmt.Sprintf("error %q", err)
	}
	return string(v)
}

// Replay is what replaying a generation's sample on new code found (Meta.Replay).
type Replay struct {
	registry.ReplaySummary
	Gen     int          `json:"gen"`               // the generation whose sample was replayed
	Skipped int          `json:"skipped,omitempty"` // inputs the replay could not judge
	Diffs   []ReplayDiff `json:"diffs,omitempty"`   // up to 5, changed answers first
	Blocked string       `json:"blocked,omitempty"` // why the new code was not promoted
	Nanos   int64        `json:"duration_ns"`
	// NotReplayable is the inputs whose run asked to send an HTTP request other than GET or
	// HEAD (a webhook, a write): not sent again, so not judged (sandbox.Input.Replay).
	NotReplayable int `json:"not_replayable,omitempty"`
	// sample is the replayed inputs with the new code's answers: the new generation's sample.
	sample []registry.SampleEntry
	// byClient is what each named client's sampled inputs did (ShadowInput.ByClient).
	byClient clientReplays
}

// Summary is the replay in one line, for events and `forge history`.
func (r *Replay) Summary() string {
	s := ReplaySummaryLine(&r.ReplaySummary)
	if r.NotReplayable > 0 {
		s += fmt.Sprintf("; %d not replayable (they send requests other than GET or HEAD, not sent again)", r.NotReplayable)
	}
	return s
}

// ReplaySummaryLine is a replay's summary in one line (`forge history`, events).
func ReplaySummaryLine(s *registry.ReplaySummary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "replayed %d sampled input(s): %d same", s.Replayed, s.Same)
	if s.Fixed > 0 {
		fmt.Fprintf(&b, ", %d fixed", s.Fixed)
	}
	if s.NowSucceeds > 0 {
		fmt.Fprintf(&b, ", %d now succeed", s.NowSucceeds)
	}
	if s.Changed > 0 {
		fmt.Fprintf(&b, ", %d changed", s.Changed)
		if s.Accepted {
			b.WriteString(" (accepted)")
		}
	}
	return b.String()
}

// shadow replays base's sample on p, the new code that passed the gate. It returns nil when there
// is nothing to replay (no sample of base's generation, or sampling off for the role).
func (c *call) shadow(ctx context.Context, base *registry.Artifact, p *compiled, failing json.RawMessage) *Replay {
	if base == nil || base.Generation == 0 {
		return nil
	}
	if cfg := c.rt.rec.Sample; cfg != nil && cfg.Off {
		return nil
	}
	sample := c.f.sampleNow(c.role, c.method, base)
	if len(sample) == 0 {
		return nil
	}
	start := time.Now()
	r := &Replay{Gen: base.Generation}
	var changed, other []ReplayDiff
	for _, e := range sample {
		if e.Gen != base.Generation {
			continue
		}
		if ctx.Err() != nil {
			r.Skipped++
			continue
		}
		e = e.Canonical() // a store may indent them
		now, nowErr, ok, sent := c.answer(ctx, p, e.Args)
		switch {
		case sent:
			r.NotReplayable++ // neither same nor changed: its answer would have cost a request
			continue
		case !ok:
			r.Skipped++ // not the code's answer: an outage, the caller's deadline, the sandbox
			continue
		}
		k := ClassifyReplay(e.Args, failing, e.Value, e.Err, now, nowErr)
		r.Replayed++
		d := ReplayDiff{Kind: k, Args: e.Args, Was: e.Value, WasErr: e.Err, Now: now, NowErr: nowErr, client: e.Client}
		switch k {
		case ReplaySame:
			r.Same++
		case ReplayFixed:
			r.Fixed++
			other = append(other, d)
		case ReplayNowSucceeds:
			r.NowSucceeds++
			other = append(other, d)
		case ReplayChanged:
			r.Changed++
			changed = append(changed, d)
		}
		if e.Client != "" {
			r.byClient = r.byClient.add(e.Client, k == ReplayChanged)
		}
		r.sample = append(r.sample, registry.SampleEntry{Args: e.Args, Value: now, Err: nowErr, At: e.At, Client: e.Client})
	}
	r.Diffs = append(changed, other...)
	if len(r.Diffs) > maxReplayDiffs {
		r.Diffs = r.Diffs[:maxReplayDiffs]
	}
	r.Nanos = int64(time.Since(start))
	return r
}

// answer runs p on args as a replay does: the code's answer (a value, or the message of a failure
// of the code's own), or ok false when the run says nothing about the code (an extrinsic failure:
// an outage, the caller's deadline, the sandbox; sent: it asked to send a request again, which
// a replay does not).
// loadSampled loads role.method after merging the inputs this process offered since the sample's
// last flush, so that a replay, diff, regeneration or repair in the process that served the calls
// sees them at once, not ~10 s later.
func (f *Forge) loadSampled(role, method string) (*registry.Artifact, error) {
	f.samples.drain()
	return f.store.Load(role, method)
}

// sampleNow is base's sample as loadSampled sees it, while the record is still at base's
// generation (otherwise base's own).
func (f *Forge) sampleNow(role, method string, base *registry.Artifact) []registry.SampleEntry {
	if f.samples == nil {
		return base.Sample
	}
	if cur, err := f.loadSampled(role, method); err == nil && cur.Generation == base.Generation {
		return cur.Sample
	}
	return base.Sample
}

func (c *call) answer(ctx context.Context, p *compiled, args json.RawMessage) (value json.RawMessage, errMsg string, ok, sent bool) {
	start := time.Now()
	// Each sampled input runs in an instance of its own: it was another call's (maybe another
	// client's), and p may go on to serve this call's client, whose state must not be what the
	// replay left (a live program per client); so do the calls it delegates (callInfo.replay).
	// The input was another call's: what it sent went out then, and goes out once (Input.Replay;
	// sent reports a run that asked to send it again).
	in := c.input(args)
	in.Limits.Instance, in.Replay = sandbox.InstancePerCall, true
	rctx := ctx
	var ri *callInfo
	if c.rt.caps.Call {
		ri = &callInfo{trace: c.ev.TraceID, call: c.ev.CallID, role: c.role, method: c.method, parent: c.parent, replay: true}
		ri.cand.Store(p)
		rctx = sandbox.WithCaller(ctx, ri)
	}
	out, err := p.sb.Run(rctx, p.prog, in)
	if se := sandbox.AsError(err); (se != nil && se.Kind == sandbox.KindNotReplayable) || (ri != nil && ri.notReplayable.Load()) {
		return nil, "", false, true
	}
	if err == nil {
		err = checkDeliverable(c.rt.deliverable, out)
	}
	if err != nil {
		fl := c.runFailure(ctx, start, err)
		if fl.result.Class == classifier.Extrinsic {
			return nil, "", false, false
		}
		return nil, fl.msg, true, false
	}
	return bytes.Clone(out.Value), "", true, false
}

// judgeReplay applies ShadowPolicy to r: it sets r.Blocked when the new code may not be promoted.
func (c *call) judgeReplay(r *Replay, base *registry.Artifact) {
	maxPct := 0
	if cfg := c.rt.rec.Sample; cfg != nil {
		maxPct = cfg.MaxChangedPercent
	}
	_, why := ShadowPolicy(ShadowInput{Blessed: base.Lifecycle == registry.Blessed, AcceptChanges: c.acceptChanges,
		ContractChanged: base.ContractFingerprint != c.rt.rec.Fingerprint, Replayed: r.Replayed, Changed: r.Changed, MaxChangedPercent: maxPct, ByClient: r.byClient})
	r.Accepted = c.acceptChanges && r.Changed > 0
	r.Blocked = why
}

// blockedFailure is the failure of new code that the replay kept from being promoted.
func (c *call) blockedFailure(r *Replay, base *registry.Artifact) *failure {
	var b strings.Builder
	fmt.Fprintf(&b, "the new code of %s.%s was not promoted: %s (%s); generation %d stays current. Changed answers:%s",
		c.role, c.method, r.Blocked, r.Summary(), base.Generation, r.changedLines())
	fmt.Fprintf(&b, "\nIf the new answers are right, run the command again with --accept-changes; otherwise fix the contract's acceptance examples or edit the code (`forge edit %s %s`)", c.role, c.method)
	return &failure{typ: TypeReplay, result: classifier.Result{Class: classifier.Intrinsic, Rule: classifier.RuleReplayChanged}, msg: b.String()}
}

// replayFeedback is the repair prompt's feedback about the sampled inputs the candidate changed.
func replayFeedback(r *Replay) string {
	return fmt.Sprintf("the code passed the acceptance examples but changes %d of %d answers the current code gave to real calls; keep these answers:%s", r.Changed, r.Replayed, r.changedLines())
}

// changedLines is the changed answers of r, one indented line each.
func (r *Replay) changedLines() string {
	var b strings.Builder
	for _, d := range r.Diffs {
		if d.Kind == ReplayChanged {
			b.WriteString("\n  " + d.String())
		}
	}
	return b.String()
}

// shadowGate replays base's sample on p, the new code that passed the gate, and applies the
// policy: it returns the failure that keeps p from being promoted, or nil. The replay is kept in
// the Outcome's meta and the event, and for persist (the new generation's sample and history).
func (c *call) shadowGate(ctx context.Context, base *registry.Artifact, p *compiled, failing json.RawMessage) *failure {
	r := c.shadow(ctx, base, p, failing)
	c.replay = r
	if r == nil {
		return nil
	}
	c.judgeReplay(r, base)
	c.tried = r
	c.meta.Replay = c.shown(r)
	c.ev.Replay = r.Summary()
	if r.Blocked != "" {
		c.replay = nil
		c.ev.Replay += "; not promoted: " + r.Blocked
		return c.blockedFailure(c.meta.Replay, base)
	}
	return nil
}

// shown is r as the call's caller may see it: every changed answer for an operator's verb and
// for a forge without client identities (the client ""), else only those of the inputs the
// caller's own calls offered. The sample holds other clients' inputs and the answers they got,
// which a client of the role must not read (the replay endpoints need the admin token for it);
// the counts are the whole sample's. The model's feedback keeps them all (call.tried).
func (c *call) shown(r *Replay) *Replay {
	if c.operator || c.client == "" {
		return r
	}
	s := *r
	s.Diffs = nil
	for _, d := range r.Diffs {
		if mayRead(c.client, d.client) {
			s.Diffs = append(s.Diffs, d)
		}
	}
	return &s
}

// keepReplay records the replay in a, just promoted to generation a.Generation: the replayed
// inputs with the new code's answers are its sample, the summary its history entry's.
func (c *call) keepReplay(a *registry.Artifact) {
	r := c.replay
	if r == nil || len(a.History) == 0 {
		return
	}
	sum := r.ReplaySummary
	a.History[0].Replay = &sum
	a.Sample = r.entries(a.Generation, c.rt.rec.Sample)
}

// entries is the replayed inputs with the new code's answers, as generation gen's sample within
// the role's bounds.
func (r *Replay) entries(gen int, cfg *registry.SampleConfig) []registry.SampleEntry {
	max, maxBytes := cfg.Bounds()
	out := make([]registry.SampleEntry, len(r.sample))
	for i, e := range r.sample {
		e.Gen = gen
		out[i] = e
	}
	out, _ = registry.MergeSample(nil, out, gen, max, maxBytes)
	return out
}

// clientReplays is a replay's ShadowInput.ByClient, in the order the clients first appear.
type clientReplays []ClientReplay

// add counts one replayed input of client, changed or not.
func (cs clientReplays) add(client string, changed bool) clientReplays {
	i := 0
	for i < len(cs) && cs[i].Client != client {
		i++
	}
	if i == len(cs) {
		cs = append(cs, ClientReplay{Client: client})
	}
	cs[i].Replayed++
	if changed {
		cs[i].Changed++
	}
	return cs
}

// ErrNoSample is returned by ReplaySample for an artifact that keeps no sample of real calls.
var ErrNoSample = errors.New("no sample of real calls")

// ReplaySample replays role.method's sample of real calls on generation gen of its code (0: the
// current one; else a generation its history keeps) and reports how far the answers agree
// (`forge replay`). Nothing is stored. The code is compiled, not gated again: an older
// generation may not pass the contract as it is now, and its answers are what is asked.
func (f *Forge) ReplaySample(ctx context.Context, role, method string, gen int) (*Replay, error) {
	rt, err := f.roleRuntime(role)
	if err != nil {
		return nil, err
	}
	art, err := f.loadSampled(role, method)
	if err != nil {
		return nil, err
	}
	code, err := generationCode(art, gen, "--gen")
	if err != nil {
		return nil, err
	}
	if len(art.Sample) == 0 {
		return nil, fmt.Errorf("forge: %s.%s: %w: calls add inputs to it as they run, unless the role's contract turns it off (\"sample\": {\"off\": true})", role, method, ErrNoSample)
	}
	p, err := f.compileKept(ctx, rt, role, method, code)
	if err != nil {
		return nil, err
	}
	defer p.release()
	c := &call{f: f, role: role, method: method, start: time.Now(), operator: true, rt: rt}
	r := c.shadow(ctx, art, p, nil)
	if r == nil {
		return nil, fmt.Errorf("forge: %s.%s: %w of its generation %d (the role's contract may have turned it off)", role, method, ErrNoSample, art.Generation)
	}
	return r, nil
}

// generationCode is the code of art's generation gen (0: the current one), from its kept history;
// flag names how the caller chooses another one, for the error.
func generationCode(art *registry.Artifact, gen int, flag string) (string, error) {
	if gen == 0 || gen == art.Generation {
		return art.Code, nil
	}
	var kept []string
	for _, g := range art.History {
		kept = append(kept, g.ID)
		if g.ID == registry.GenerationID(gen) {
			return g.Code, nil
		}
	}
	return "", fmt.Errorf("forge: %s.%s keeps no generation %d (it keeps %s): %w; pass one of those to %s", art.Role, art.Method, gen, strings.Join(kept, ", "), registry.ErrNoGeneration, flag)
}

// compileKept compiles code role.method kept (a generation of its history) to replay it. It is
// not gated again: an older generation may not pass the contract as it is now, and its answers
// are what is asked.
func (f *Forge) compileKept(ctx context.Context, rt *roleRuntime, role, method, code string) (*compiled, error) {
	sb, err := f.sandbox(rt.backend)
	if err != nil {
		return nil, err
	}
	prog, err := sb.Compile(ctx, sandbox.Source{Code: code, Func: method, Limits: rt.limits})
	if err != nil {
		return nil, fmt.Errorf("forge: %s.%s: compile the code to replay: %w", role, method, err)
	}
	return newCompiled(nil, prog, sb, f.programs), nil
}
