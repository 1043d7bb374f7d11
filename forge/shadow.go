package forge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/artifactforge/forge/classifier"
	"github.com/artifactforge/forge/registry"
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
	wasOK, nowOK := wasErr == "", nowErr == ""
	switch {
	case !wasOK && !nowOK:
		return ReplaySame
	case wasOK && nowOK && jsonEqual(wasValue, now):
		return ReplaySame
	case failing != nil && jsonEqual(args, failing):
		return ReplayFixed
	case !wasOK && nowOK:
		return ReplayNowSucceeds
	}
	return ReplayChanged
}

// ShadowInput is what ShadowPolicy decides on.
type ShadowInput struct {
	Blessed       bool // the artifact the new code replaces is blessed
	AcceptChanges bool // an operator accepted changed answers (--accept-changes)
	Replayed      int  // sampled inputs replayed and judged (skipped ones excluded)
	Changed       int
	// MaxChangedPercent for an artifact that is not blessed (0: DefaultMaxChangedPercent;
	// negative: no threshold).
	MaxChangedPercent int
}

// ShadowPolicy decides whether new code whose replay changed in.Changed answers may be promoted,
// and if not, why. Answers that now succeed or are the failing input's never block.
func ShadowPolicy(in ShadowInput) (block bool, why string) {
	switch {
	case in.Changed == 0 || in.AcceptChanges:
		return false, ""
	case in.Blessed:
		return true, fmt.Sprintf("the artifact is blessed and the new code changes %d of %d sampled answers", in.Changed, in.Replayed)
	}
	max := in.MaxChangedPercent
	if max == 0 {
		max = DefaultMaxChangedPercent
	}
	if max > 0 && in.Changed*100 > max*in.Replayed {
		return true, fmt.Sprintf("the new code changes %d of %d sampled answers, more than %d%%", in.Changed, in.Replayed, max)
	}
	return false, ""
}

// ReplayDiff is one sampled input whose answer the new code does not keep.
type ReplayDiff struct {
	Kind   ReplayKind      `json:"kind"`
	Args   json.RawMessage `json:"args"`
	Was    json.RawMessage `json:"was,omitempty"`
	WasErr string          `json:"was_error,omitempty"`
	Now    json.RawMessage `json:"now,omitempty"`
	NowErr string          `json:"now_error,omitempty"`
}

func (d ReplayDiff) String() string {
	ans := func(v json.RawMessage, err string) string {
		if err != "" {
			return fmt.Sprintf("error %q", err)
		}
		return string(v)
	}
	return fmt.Sprintf("args %s: was %s, now %s", d.Args, ans(d.Was, d.WasErr), ans(d.Now, d.NowErr))
}

// Replay is what replaying a generation's sample on new code found (Meta.Replay).
type Replay struct {
	registry.ReplaySummary
	Gen     int          `json:"gen"`               // the generation whose sample was replayed
	Skipped int          `json:"skipped,omitempty"` // inputs the replay could not judge
	Diffs   []ReplayDiff `json:"diffs,omitempty"`   // up to 5, changed answers first
	Blocked string       `json:"blocked,omitempty"` // why the new code was not promoted
	Nanos   int64        `json:"duration_ns"`
	// sample is the replayed inputs with the new code's answers: the new generation's sample.
	sample []registry.SampleEntry
}

// Summary is the replay in one line, for events and `forge history`.
func (r *Replay) Summary() string { return ReplaySummaryLine(&r.ReplaySummary) }

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
	if base == nil || base.Generation == 0 || len(base.Sample) == 0 {
		return nil
	}
	if cfg := c.rt.rec.Sample; cfg != nil && cfg.Off {
		return nil
	}
	start := time.Now()
	r := &Replay{Gen: base.Generation}
	var changed, other []ReplayDiff
	for _, e := range base.Sample {
		if e.Gen != base.Generation {
			continue
		}
		if ctx.Err() != nil {
			r.Skipped++
			continue
		}
		e.Args, e.Value = canonical(e.Args), canonical(e.Value) // a store may indent them
		runStart := time.Now()
		out, err := p.sb.Run(c.runCtx(ctx, p), p.prog, c.input(e.Args))
		if err == nil {
			err = checkDeliverable(c.rt.deliverable, out)
		}
		var nowErr string
		if err != nil {
			fl := c.runFailure(ctx, runStart, err)
			if fl.result.Class == classifier.Extrinsic {
				r.Skipped++ // not the code's answer: an outage, the caller's deadline, the sandbox
				continue
			}
			nowErr = fl.msg
		}
		k := ClassifyReplay(e.Args, failing, e.Value, e.Err, out.Value, nowErr)
		r.Replayed++
		d := ReplayDiff{Kind: k, Args: e.Args, Was: e.Value, WasErr: e.Err, Now: out.Value, NowErr: nowErr}
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
		r.sample = append(r.sample, registry.SampleEntry{Args: e.Args, Value: bytes.Clone(out.Value), Err: nowErr, At: e.At})
	}
	r.Diffs = append(changed, other...)
	if len(r.Diffs) > maxReplayDiffs {
		r.Diffs = r.Diffs[:maxReplayDiffs]
	}
	r.Nanos = int64(time.Since(start))
	return r
}

// judgeReplay applies ShadowPolicy to r: it sets r.Blocked when the new code may not be promoted.
func (c *call) judgeReplay(r *Replay, base *registry.Artifact) {
	maxPct := 0
	if cfg := c.rt.rec.Sample; cfg != nil {
		maxPct = cfg.MaxChangedPercent
	}
	_, why := ShadowPolicy(ShadowInput{Blessed: base.Lifecycle == registry.Blessed, AcceptChanges: c.acceptChanges,
		Replayed: r.Replayed, Changed: r.Changed, MaxChangedPercent: maxPct})
	r.Accepted = c.acceptChanges && r.Changed > 0
	r.Blocked = why
}

// blockedFailure is the failure of new code that the replay kept from being promoted.
func (c *call) blockedFailure(r *Replay, base *registry.Artifact) *failure {
	var b strings.Builder
	fmt.Fprintf(&b, "the new code of %s.%s was not promoted: %s (%s); generation %d stays current. Changed answers:",
		c.role, c.method, r.Blocked, r.Summary(), base.Generation)
	for _, d := range r.Diffs {
		if d.Kind == ReplayChanged {
			b.WriteString("\n  " + d.String())
		}
	}
	fmt.Fprintf(&b, "\nIf the new answers are right, run the command again with --accept-changes; otherwise fix the contract's acceptance examples or edit the code (`forge edit %s %s`)", c.role, c.method)
	return &failure{typ: "replay", result: classifier.Result{Class: classifier.Intrinsic, Rule: classifier.RuleReplayChanged}, msg: b.String()}
}

// replayFeedback is the repair prompt's feedback about the sampled inputs the candidate changed.
func replayFeedback(r *Replay) string {
	var b strings.Builder
	fmt.Fprintf(&b, "the code passed the acceptance examples but changes %d of %d answers the current code gave to real calls; keep these answers:", r.Changed, r.Replayed)
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
	c.meta.Replay = r
	c.ev.Replay = r.Summary()
	if r.Blocked != "" {
		c.replay = nil
		c.ev.Replay += "; not promoted: " + r.Blocked
		return c.blockedFailure(r, base)
	}
	return nil
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
	max, maxBytes := c.rt.rec.Sample.Bounds()
	entries := make([]registry.SampleEntry, len(r.sample))
	for i, e := range r.sample {
		e.Gen = a.Generation
		entries[i] = e
	}
	a.Sample, _ = registry.MergeSample(nil, entries, a.Generation, max, maxBytes)
}

// canonical is v as canonical JSON (v itself when it is not JSON).
func canonical(v json.RawMessage) json.RawMessage {
	if len(v) == 0 {
		return v
	}
	if c, err := registry.CanonicalJSON(v); err == nil {
		return c
	}
	return v
}
