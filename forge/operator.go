package forge

import (
	"context"
	"errors"
	"fmt"
	"os/user"
	"time"

	"github.com/artifactforge/forge/classifier"
	"github.com/artifactforge/forge/registry"
)

// Operator actions: the Action of an operator action's event line (its Reason is "operator").
// Every one of them writes one line, done or refused, with who (Event.Who), the generation and
// lifecycle before and after, and what exactly (Event.Detail); `forge stats` counts them.
const (
	OpBless         = "bless"
	OpQuarantine    = "quarantine"
	OpLift          = "lift" // a quarantine lifted after the gate passed the code again
	OpRollback      = "rollback"
	OpArchive       = "archive" // forge prune
	OpRegenNextCall = "regen_next_call"
	OpRegenerate    = "regenerate" // forge regen (Forge.Regenerate)
	OpEdit          = "edit"       // forge edit (Forge.Edit)
	OpRestore       = "restore"    // forge quarantine restore ID
	OpDismiss       = "dismiss"    // forge quarantine dismiss ID
)

// reasonOperator is the Reason of every operator action's line.
const reasonOperator = "operator"

// IsOperatorAction reports whether e is an operator action's line (not a call).
func IsOperatorAction(e *Event) bool {
	return e.Kind == "" && (e.Reason == reasonOperator || e.Action == OpEdit)
}

// CLIClient is the client name of the forge command run by the current OS user: "cli:USER".
func CLIClient() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return "cli:" + u.Username
	}
	return "cli"
}

// who names the client of an operator action: the context's (WithClient), else the process's
// Options.ClientName, else "library" (the Go API with no name given).
func (f *Forge) who(ctx context.Context) string {
	if c := ClientFrom(ctx); c != "" {
		return c
	}
	if f.opts.ClientName != "" {
		return f.opts.ClientName
	}
	return "library"
}

// opEvent starts an operator action's line.
func (f *Forge) opEvent(ctx context.Context, action, role, method, detail string) *Event {
	id := newID()
	return &Event{TraceID: id, CallID: id, Role: role, Method: method, Action: action, Reason: reasonOperator,
		Who: f.who(ctx), Detail: detail}
}

// emitOp writes an operator action's line (done when err is nil, else refused with err's
// message) to the log and the event sink, like a call's.
func (f *Forge) emitOp(e *Event, start time.Time, err error) {
	e.OK = err == nil
	if err != nil {
		e.FailureType = TypeRefused
		if errors.Is(err, registry.ErrNotFound) {
			e.FailureType = TypeNotFound
		}
		if e.Detail != "" {
			e.Detail += "; "
		}
		e.Detail += "refused: " + err.Error()
	}
	e.DurationNS = int64(time.Since(start))
	e.Time = f.now().UTC()
	if f.events != nil {
		f.events.emit(e)
	}
	if f.opts.EventSink != nil {
		f.opts.EventSink(*e)
	}
}

// setAfter records an artifact's state after an action (and its trigger).
func (e *Event) setAfter(a *registry.Artifact) {
	e.ArtifactGen, e.Lifecycle = a.Generation, string(a.Lifecycle)
	e.ContractFingerprint, e.PromptVersion = a.ContractFingerprint, a.PromptVersion
	e.SuccessCount, e.FailureCount = a.SuccessCount, a.FailureCount
	e.IntrinsicFailureCount, e.AdaptiveFailureCount, e.ExtrinsicFailureCount = a.IntrinsicFailureCount, a.AdaptiveFailureCount, a.ExtrinsicFailureCount
	if len(a.History) > 0 {
		e.GenerationTrigger = a.History[0].Trigger
	}
}

// operate is an operator action on an existing artifact: a locked read-modify-write whose line
// says the generation and lifecycle before and after (unchanged when refused).
func (f *Forge) operate(ctx context.Context, action, detail, role, method string, fn func(a *registry.Artifact) error) (*registry.Artifact, error) {
	return f.operateEvent(time.Now(), f.opEvent(ctx, action, role, method, detail), role, method, fn)
}

// operateEvent is operate with the action's line already started.
func (f *Forge) operateEvent(start time.Time, e *Event, role, method string, fn func(a *registry.Artifact) error) (*registry.Artifact, error) {
	var before *registry.Artifact
	art, err := f.update(role, method, func(a *registry.Artifact) error {
		b := *a
		before = &b
		return fn(a)
	})
	if before != nil {
		e.ArtifactGenBefore, e.LifecycleBefore = before.Generation, string(before.Lifecycle)
		e.setAfter(before)
	}
	if art != nil {
		e.setAfter(art)
	}
	f.emitOp(e, start, err)
	return art, err
}

// BlessContext is Bless by the client ctx names (WithClient), for the event log.
func (f *Forge) BlessContext(ctx context.Context, role, method string, resetMetrics bool) error {
	if resetMetrics {
		// This process's outcomes recorded before the reset are merged now, so that the reset
		// clears them instead of their flush adding them after it (another process's buffered
		// outcomes still land after it: see RATIONALE, "Per-generation accounting").
		f.rec.Flush()
	}
	detail := ""
	if resetMetrics {
		detail = "reset metrics"
	}
	_, err := f.operate(ctx, OpBless, detail, role, method, func(a *registry.Artifact) error {
		if a.Lifecycle == registry.Quarantined {
			return fmt.Errorf("forge: %s.%s is quarantined: lift the quarantine (`forge quarantine lift %s %s`, the gate checks the code again), roll it back or regenerate it before blessing", role, method, role, method)
		}
		a.Lifecycle = registry.Blessed
		if resetMetrics {
			a.Counters = registry.Counters{}
			a.LastFailureClass, a.LastFailureReason = "", ""
		}
		return nil
	})
	return err
}

// QuarantineContext is Quarantine by the client ctx names (WithClient), for the event log.
func (f *Forge) QuarantineContext(ctx context.Context, role, method string) error {
	_, err := f.operate(ctx, OpQuarantine, "", role, method, func(a *registry.Artifact) error {
		a.Lifecycle = registry.Quarantined
		return nil
	})
	return err
}

// RollbackContext is Rollback by the client ctx names (WithClient), for the event log.
func (f *Forge) RollbackContext(ctx context.Context, role, method string, gen int) (*registry.Artifact, error) {
	return f.RollbackWith(ctx, role, method, gen, PromoteOptions{})
}

// ArchiveContext is Archive by the client ctx names (WithClient), for the event log.
func (f *Forge) ArchiveContext(ctx context.Context, role, method string) error {
	_, err := f.operate(ctx, OpArchive, "", role, method, func(a *registry.Artifact) error {
		a.Lifecycle = registry.Archived
		return nil
	})
	return err
}

// MarkRegenerateContext is MarkRegenerate by the client ctx names (WithClient), for the event log.
func (f *Forge) MarkRegenerateContext(ctx context.Context, role, method string) error {
	_, err := f.operate(ctx, OpRegenNextCall, "the next call regenerates", role, method, func(a *registry.Artifact) error {
		a.ForceRegenerate = true
		return nil
	})
	return err
}

// ErrNotQuarantined is returned by LiftQuarantine for an artifact an operator did not quarantine.
var ErrNotQuarantined = errors.New("not quarantined")

// LiftQuarantine is the way back from an operator's quarantine that was a mistake, for any
// generation (the first one included, which has nothing to roll back to): the current code goes
// through the gate again against the role's current contract (policy, compile, declared
// signature, acceptance examples and tests) and, if it passes, becomes a candidate that calls
// run again. Code the gate refuses stays quarantined, and the Outcome's error carries the gate's
// feedback. The Outcome has no value (no args were given).
func (f *Forge) LiftQuarantine(ctx context.Context, role, method string) Outcome {
	return f.LiftQuarantineWith(ctx, role, method, PromoteOptions{})
}

// LiftQuarantineWith is LiftQuarantine with the operator's options: after the gate, the code
// replays the sample of real calls, and the quarantine stands when the policy says so (more
// changed answers than the threshold, unless AcceptChanges). The Outcome's meta has the replay.
func (f *Forge) LiftQuarantineWith(ctx context.Context, role, method string, opts PromoteOptions) Outcome {
	start := time.Now()
	e := f.opEvent(ctx, OpLift, role, method, "")
	done := func(o Outcome, err error) Outcome {
		if err != nil && o.Err == nil {
			o.Err = (&failure{typ: TypeRefused, result: classifier.Result{Class: classifier.Caller, Rule: classifier.RuleArgs}, msg: err.Error()}).toError()
		}
		if o.Err != nil && err == nil {
			err = errors.New(o.Err.Message)
		}
		o.OK = err == nil
		o.Meta.ArtifactGen = e.ArtifactGen
		o.Meta.Decision = "lift:operator"
		o.Meta.Duration = time.Since(start)
		f.emitOp(e, start, err)
		return o
	}
	if !f.enter() {
		return done(Outcome{Err: closedFailure(role, method).toError()}, nil)
	}
	defer f.leave()
	rt, err := f.roleRuntime(role)
	if err != nil {
		return done(Outcome{}, err)
	}
	if err := registry.ValidateName("method", method); err != nil {
		return done(Outcome{}, err)
	}
	c := &call{f: f, role: role, method: method, start: start, rt: rt, operator: true, acceptChanges: opts.AcceptChanges}
	var gateErr, replayErr *failure
	err = f.store.WithGenerationLock(role, method, func() error {
		a, err := f.store.Load(role, method)
		if err != nil {
			return err
		}
		e.ArtifactGenBefore, e.LifecycleBefore = a.Generation, string(a.Lifecycle)
		e.setAfter(a)
		if a.Lifecycle != registry.Quarantined {
			return fmt.Errorf("forge: %s.%s is %s, %w: there is nothing to lift", role, method, a.Lifecycle, ErrNotQuarantined)
		}
		p, _, fl := c.verify(ctx, a.Code)
		if fl != nil {
			gateErr = fl
			return nil
		}
		replayErr = c.shadowGate(ctx, a, p, nil) // the code may answer otherwise now (a runtime changed)
		p.release()                              // the call that runs it compiles it again, as after any store change
		e.Replay = c.ev.Replay
		if replayErr != nil {
			return nil
		}
		art, err := f.update(role, method, func(b *registry.Artifact) error {
			if b.Generation != a.Generation || b.Lifecycle != registry.Quarantined {
				return fmt.Errorf("forge: %s.%s changed while its code was checked (now gen %d, %s): look at `forge show %s %s` and run the command again if it is still wanted",
					role, method, b.Generation, b.Lifecycle, role, method)
			}
			b.Lifecycle = registry.Candidate
			if r := c.replay; r != nil && r.Changed+r.NowSucceeds > 0 {
				b.Sample = r.entries(b.Generation, rt.rec.Sample) // the answers it gives now
			}
			return nil
		})
		if err != nil {
			return err
		}
		e.setAfter(art)
		return nil
	})
	if gateErr != nil {
		gateErr.msg = fmt.Sprintf("the quarantine of %s.%s stands: its code (gen %d) did not pass the gate again: %s; run `forge edit %s %s` to fix the code, `forge regen %s %s` for new code, or `forge rollback %s %s` to an earlier generation",
			role, method, e.ArtifactGen, gateErr.msg, role, method, role, method, role, method)
		return done(Outcome{Err: gateErr.toError()}, nil)
	}
	if replayErr != nil {
		replayErr.msg = fmt.Sprintf("the quarantine of %s.%s stands: %s", role, method, replayErr.msg)
		return done(Outcome{Err: replayErr.toError(), Meta: Meta{Replay: c.meta.Replay}}, nil)
	}
	if err != nil {
		if errors.Is(err, registry.ErrNotFound) {
			err = fmt.Errorf("forge: %s.%s: %w; it is created by the first `forge call %s %s`", role, method, err, role, method)
		}
		return done(Outcome{}, err)
	}
	e.Detail = "the gate passed the code again"
	return done(Outcome{Meta: Meta{Replay: c.meta.Replay}}, nil)
}

// RestoreQuarantined puts back a damaged file the store quarantined (registry.Maintainer's
// Restore; `forge quarantine restore ID`) and writes the operator's line.
func (f *Forge) RestoreQuarantined(ctx context.Context, id string) (Restored, error) {
	return f.RestoreQuarantinedWith(ctx, id, PromoteOptions{})
}

// RestoreQuarantinedWith is RestoreQuarantined with the operator's options: restored code that
// becomes an artifact's new generation replays the sample of real calls the code before it
// answered, and is rolled back when the policy says so (restoreReplay).
func (f *Forge) RestoreQuarantinedWith(ctx context.Context, id string, opts PromoteOptions) (Restored, error) {
	start := time.Now()
	e := f.opEvent(ctx, OpRestore, "", "", "entry "+id)
	m, err := f.Maintainer()
	if err != nil {
		f.emitOp(e, start, err)
		return Restored{}, err
	}
	var before *registry.Artifact
	ent, ok := f.quarantineEntry(m, id)
	if ok {
		e.Role, e.Method = ent.Role, ent.Method
		if ent.Kind == registry.QuarantineArtifact {
			if a, err := f.store.Load(ent.Role, ent.Method); err == nil {
				e.ArtifactGenBefore, e.LifecycleBefore = a.Generation, string(a.Lifecycle)
				before = a
			}
		}
	}
	var rr registry.RestoreReport
	restore := func() error {
		rr, err = m.Restore(id, f.now())
		if err == nil && rr.Action == "accepted" && before != nil {
			err = f.restoreReplay(ctx, e, before, opts)
		}
		return err
	}
	if ok && ent.Kind == registry.QuarantineArtifact && registry.ValidateName("role", ent.Role) == nil && registry.ValidateName("method", ent.Method) == nil {
		// No generation of another process lands between the restore and its replay.
		if lerr := f.store.WithGenerationLock(ent.Role, ent.Method, restore); err == nil {
			err = lerr
		}
	} else {
		err = restore()
	}
	if err == nil || errors.Is(err, ErrReplayChanged) {
		e.Role, e.Method = rr.Entry.Role, rr.Entry.Method
		e.Detail += ": " + rr.Action + ": " + rr.Detail
		if rr.Entry.Kind == registry.QuarantineArtifact {
			if a, lerr := f.store.Load(rr.Entry.Role, rr.Entry.Method); lerr == nil {
				e.setAfter(a)
			}
		}
	}
	f.emitOp(e, start, err)
	res := Restored{RestoreReport: rr, Stale: []StaleArtifact{}}
	if err == nil && rr.Role != nil && (rr.Previous == nil || rr.Previous.Fingerprint != rr.Role.Fingerprint) {
		res.Stale, err = StaleByContract(f.store, rr.Role.Role)
	}
	return res, err
}

// Restored is what RestoreQuarantined did, and the artifacts a role's restored contract made
// stale (their next call repairs them).
type Restored struct {
	registry.RestoreReport
	Stale []StaleArtifact `json:"stale_artifacts"`
}

// DismissQuarantined resolves a quarantine entry, keeping the store as it is (registry.Maintainer's
// Dismiss; `forge quarantine dismiss ID`), and writes the operator's line.
func (f *Forge) DismissQuarantined(ctx context.Context, id string) (registry.QuarantineReport, error) {
	start := time.Now()
	e := f.opEvent(ctx, OpDismiss, "", "", "entry "+id)
	m, err := f.Maintainer()
	if err != nil {
		f.emitOp(e, start, err)
		return registry.QuarantineReport{}, err
	}
	ent, err := m.Dismiss(id)
	if err == nil {
		e.Role, e.Method = ent.Role, ent.Method
		e.Detail += " (" + ent.Kind + ": " + ent.Path + ") dismissed"
		if ent.Kind == registry.QuarantineArtifact {
			if a, lerr := f.store.Load(ent.Role, ent.Method); lerr == nil {
				e.ArtifactGenBefore, e.LifecycleBefore = a.Generation, string(a.Lifecycle)
				e.setAfter(a)
			}
		}
	}
	f.emitOp(e, start, err)
	return ent, err
}

// quarantineEntry finds a pending quarantine entry by id.
func (f *Forge) quarantineEntry(m registry.Maintainer, id string) (registry.QuarantineReport, bool) {
	q, err := m.Quarantined()
	if err != nil {
		return registry.QuarantineReport{}, false
	}
	for _, e := range q {
		if e.ID == id {
			return e, true
		}
	}
	return registry.QuarantineReport{}, false
}
