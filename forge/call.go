package forge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/artifactforge/forge/classifier"
	"github.com/artifactforge/forge/registry"
	"github.com/artifactforge/forge/repair"
	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/selector"
)

// callInfo is one call of a delegation chain, put in the context of its runs (as their
// sandbox.Caller) when its role may delegate: a delegated call (host Call) reads its trace, its
// parent and the chain from it.
type callInfo struct {
	trace, call  ID
	role, method string
	parent       *callInfo
	// cand is the code of role.method under verification in this call, if any: a delegated call
	// of role.method below this one runs it (the code calling itself) instead of waiting for the
	// generation this call leads.
	cand atomic.Pointer[compiled]
	// capHit is set when this call is blamed for a delegation chain that went past the depth
	// cap (see blameCallDepth): its failure is then intrinsic, whatever its code did with the
	// refusal's error.
	capHit atomic.Pointer[string]
	// replay marks the run of a sampled input (shadow.go): the calls it delegates run in
	// instances of their own too (call.input), leaving no state in the live programs of the
	// client the replay runs for.
	replay bool
	// notReplayable is set on a replay's callInfo when a run below it (its own or a delegated
	// call's) asked to send a request a replay does not send (sandbox.KindNotReplayable): the
	// input's answer then says nothing about the code, whatever the code did with the refusal.
	notReplayable atomic.Bool
}

// replayOf is the callInfo of the replay this call runs below (a delegated call of a replayed
// input), or nil.
func (c *call) replayOf() *callInfo {
	for l := c.parent; l != nil; l = l.parent {
		if l.replay {
			return l
		}
	}
	return nil
}

// CallChain implements sandbox.Caller: "role.method" from the top-level call to this one.
func (ci *callInfo) CallChain() []string {
	n := 0
	for l := ci; l != nil; l = l.parent {
		n++
	}
	chain := make([]string, n)
	for l := ci; l != nil; l = l.parent {
		n--
		chain[n] = l.role + "." + l.method
	}
	return chain
}

// callerInfo returns the forge call that ctx was delegated from, if any.
func callerInfo(ctx context.Context) *callInfo {
	ci, _ := sandbox.CallerOf(ctx).(*callInfo)
	return ci
}

// call is the state of one Call as it moves through selection, execution and generation.
type call struct {
	f      *Forge
	rt     *roleRuntime
	role   string
	method string
	client string // who the call is for (ClientFrom): the live program it runs is this client's
	args   json.RawMessage
	info   *callInfo // this call in its delegation chain (roles that may delegate)
	parent *callInfo // the call this one was delegated from
	ev     Event
	meta   Meta
	art    *registry.Artifact // the artifact the call ended with, if any
	start  time.Time
	// end is the clock read that ended the call (zero until endNow): the recorder's duration, the
	// Meta's and the event's, and the event's time (real clock) share it.
	end time.Time
	// operator: an operator's regeneration (Regenerate) or edit (Edit): no args to run, and a
	// generation that produces nothing usable leaves the current one exactly as it was.
	operator bool
	// keep is the lifecycle an operator's edit keeps (EditOptions.KeepLifecycle); "" makes new
	// code a candidate.
	keep registry.Lifecycle
	// acceptChanges: the operator accepts new code that changes sampled answers (shadow.go).
	acceptChanges bool
	// replay is the shadow replay of the new code about to be persisted (shadow.go), if any.
	replay *Replay
	// tried is the latest shadow replay in full, the changed answers of every client: the
	// model's feedback (Meta.Replay is what the caller may see of it, call.shown).
	tried *Replay
	// cause is the failure of the persisted code that sent this call to repair or regenerate,
	// if any: reported first when no code generator is there to fix it.
	cause *failure
	// warm is the warm path's cache entry of c.art (live.go), when the call used or made one;
	// decided holds the selector's Execute decision for c.art, to make one (executeProgram).
	warm       *warmState
	warmHit    bool // the call took the warm path (run): nothing was compiled or decided
	decided    selector.Decision
	hasDecided bool
	// within is CallWithin's bound (0: none); cancel ends its context once bound made it.
	within time.Duration
	cancel context.CancelFunc
	// modelHold is the model call the client's bound held for the generation this call leads
	// (produce): its first model call takes it.
	modelHold *atomic.Bool
}

// Call runs role.method with args (a JSON object by parameter name, or an array by position).
// A healthy persisted artifact runs with no provider call; otherwise the code is generated,
// repaired or regenerated first. The Outcome says what happened; Call never panics.
func (f *Forge) Call(ctx context.Context, role, method string, args json.RawMessage) Outcome {
	return f.callWithin(ctx, 0, role, method, args)
}

// CallWithin is Call bounded by timeout, as Call on a context with that timeout, without a timer
// where none is needed: a warm call whose role's own time limit (the sandbox's deadline) ends
// before timeout runs on ctx as it is, and the bound is made only if the call goes on to anything
// else (compiling, generating, repairing). `forge serve` bounds every call so (--call-timeout).
func (f *Forge) CallWithin(ctx context.Context, timeout time.Duration, role, method string, args json.RawMessage) Outcome {
	return f.callWithin(ctx, timeout, role, method, args)
}

func (f *Forge) callWithin(ctx context.Context, within time.Duration, role, method string, args json.RawMessage) Outcome {
	if !f.enter() {
		return Outcome{Err: closedFailure(role, method).toError()}
	}
	defer f.leave()
	c := &call{f: f, role: role, method: method, client: ClientFrom(ctx), args: args, start: time.Now(), within: within}
	defer c.unbind()
	c.ev.Role, c.ev.Method, c.ev.CallID, c.ev.Client = role, method, newID(), c.client
	if sandbox.CallDepth(ctx) > 0 {
		if parent := callerInfo(ctx); parent != nil {
			c.parent = parent
			c.ev.TraceID, c.ev.ParentCallID = parent.trace, parent.call
		}
		c.ev.Depth = sandbox.CallDepth(ctx)
	}
	if c.ev.TraceID == 0 {
		c.ev.TraceID = c.ev.CallID
	}
	if cand := c.candidate(); cand != nil {
		return c.finish(c.executeCandidate(c.bound(ctx), cand))
	}
	o := c.run(ctx)
	return c.finish(o)
}

// candidate returns the code under verification for this call's role.method in one of its
// ancestors: code that delegates to itself while its own gate runs it.
func (c *call) candidate() *compiled {
	for l := c.parent; l != nil; l = l.parent {
		if l.role == c.role && l.method == c.method {
			if p := l.cand.Load(); p != nil {
				return p
			}
		}
	}
	return nil
}

// executeCandidate runs code that is still being verified by an ancestor call: nothing is
// recorded against an artifact (there is none yet), and a failure is the ancestor's gate's to judge.
func (c *call) executeCandidate(ctx context.Context, p *compiled) Outcome {
	rt, err := c.f.roleRuntime(c.role)
	if err != nil {
		return c.fail(roleFailure(c.role, err))
	}
	c.rt = rt
	if c.overArgs(rt) {
		return c.fail(c.oversize())
	}
	c.ev.Action, c.ev.Reason = "execute", "candidate"
	c.meta.Decision, c.meta.ProgramSource = "execute:candidate", SourceGenerated
	if !p.acquire() {
		return c.fail(&failure{typ: string(sandbox.KindCapacity), result: classifier.Classify(classifier.Failure{Kind: classifier.KindCapacity}),
			msg: fmt.Sprintf("the code of %s.%s that its caller is verifying was already closed (its verification ended); call again", c.role, c.method)})
	}
	defer p.release()
	start := time.Now()
	out, err := p.sb.Run(c.runCtx(ctx, nil), p.prog, c.input(c.args))
	c.ev.SandboxNS = int64(out.Duration)
	c.meta.Logs = out.Logs
	if err == nil {
		err = checkDeliverable(c.rt.deliverable, out)
	}
	if err != nil {
		return c.fail(c.judgeReturned(c.runFailure(ctx, start, err), c.args, p.prog.Signature()))
	}
	return Outcome{OK: true, Value: out.Value}
}

func (c *call) run(ctx context.Context) Outcome {
	f := c.f
	rt, err := f.roleRuntime(c.role)
	if err != nil {
		return c.fail(roleFailure(c.role, err))
	}
	if c.overArgs(rt) { // health hook: args that alone exceed the role's caps are the caller's
		c.rt = rt
		return c.fail(c.oversize())
	}
	c.rt = rt
	if c.within > 0 && rt.limits.WithDefaults().Timeout > c.within {
		ctx = c.bound(ctx) // the caller's bound ends first: the run needs it
	}
	key := liveKey{Role: c.role, Method: c.method, Client: c.client}
	// The warm path: the live program remembers the decision made for one store snapshot under
	// this role runtime (warmState; the method was checked against the same contract then), so
	// when the store still answers with that snapshot nothing else is checked, read or decided.
	// Its pin of the snapshot lets the store confirm that without its own map (registry.PinLookup).
	p, w := f.programs.warmOf(key, rt)
	if w != nil && f.pins != nil && w.pin != (registry.Pin{}) {
		if art, ok := f.pins.Relookup(w.pin); ok && art == w.art && f.programs.take(p) {
			return c.warmRun(ctx, art, p, w)
		}
	}
	art, ok := f.store.Lookup(c.role, c.method)
	if ok && w != nil && art == w.art && f.programs.take(p) {
		return c.warmRun(ctx, art, p, w)
	}
	ctx = c.bound(ctx) // not warm: compiling or generating may follow
	if err := registry.ValidateName("method", c.method); err != nil {
		return c.fail(c.unknownMethod(err.Error()))
	}
	if msg := methodRefusal(rt.rec, c.method, false); msg != "" {
		return c.fail(c.unknownMethod(msg))
	}
	var loadErr error
	if !ok {
		art, loadErr = f.store.Load(c.role, c.method)
	}
	if errors.Is(loadErr, registry.ErrNotFound) {
		if msg := methodRefusal(rt.rec, c.method, true); msg != "" {
			return c.fail(c.unknownMethod(msg))
		}
	}
	in := selector.Input{
		Switches: f.opts.Switches,
		Role:     c.role,
		Current: selector.Current{SchemaVersion: registry.SchemaVersion, RuntimeVersion: registry.RuntimeVersion,
			ContractFingerprint: rt.rec.Fingerprint, PromptVersion: PromptVersion},
	}
	switch {
	case loadErr == nil:
		in.Artifact = selectorArtifact(art)
		in.RepairsLeft = rt.budget.Remaining(art.RepairCountSinceRegen)
		c.art = art
	case errors.Is(loadErr, registry.ErrNotFound):
		in.Artifact.Missing = true
	case errors.Is(loadErr, registry.ErrIncompatible) && art != nil:
		in.Artifact = selectorArtifact(art)
		c.art = art
	case errors.Is(loadErr, registry.ErrCorrupt), errors.Is(loadErr, registry.ErrIncompatible):
		in.Artifact.Corrupt = true
	default:
		return c.fail(&failure{typ: TypeStore, result: classifier.Classify(classifier.Failure{Kind: classifier.KindInternal}), msg: loadErr.Error()})
	}
	c.ev.ArtifactHit = loadErr == nil

	d := selector.Decide(in)
	c.ev.Action, c.ev.Reason = string(d.Action), string(d.Reason)
	c.meta.Decision = c.ev.Action + ":" + c.ev.Reason
	switch d.Action {
	case selector.Execute:
		c.decided, c.hasDecided = d, loadErr == nil
		return c.executePersisted(ctx, art)
	case selector.Refuse:
		return c.fail(&failure{typ: TypeRefused, result: classifier.Result{Class: classifier.Extrinsic, Rule: classifier.Rule(d.Reason)},
			msg: d.Hint(c.role, c.method)})
	}
	if fl := c.checkArgsFirst(); fl != nil {
		return c.fail(fl) // before any provider call
	}
	last := classifier.Class("")
	if art != nil {
		last = classifier.Class(art.LastFailureClass)
	}
	trig, _ := repair.TriggerFor(d, last)
	var failed *repair.Attempt
	if d.Action == selector.Repair {
		failed = &repair.Attempt{Code: art.Code, Result: classifier.Result{Class: trig.Class}}
		if d.Reason == selector.ReasonStaleContract {
			failed.Result.Rule = classifier.RuleStaleContract
			failed.Error = "the role's contract changed since this code was verified; make the code fit the contract as it is now"
		} else {
			failed.Error = fmt.Sprintf("the code is degraded by recent failures; last: %s: %s", art.LastFailureClass, art.LastFailureReason)
		}
		c.meta.RepairAttempted = true
	}
	return c.produce(ctx, art, trig, failed)
}

// unknownMethod is the caller's failure of calling a method its role does not take (methodRefusal).
func (c *call) unknownMethod(msg string) *failure {
	return &failure{typ: TypeUnknownMethod, result: classifier.Result{Class: classifier.Caller, Rule: classifier.RuleArgs}, msg: msg}
}

func methodList(m map[string]string) string {
	return strings.Join(slices.Sorted(maps.Keys(m)), ", ")
}

// input is the sandbox input for args under the role's grants and limits.
func (c *call) input(args json.RawMessage) sandbox.Input {
	in := sandbox.Input{Args: args, Caps: c.rt.caps, Limits: c.rt.limits}
	if c.rt.caps.Call {
		in.Call = c.f.delegate
	}
	if c.replayOf() != nil { // a delegated call below a replay: as the replay's own run
		in.Limits.Instance, in.Replay = sandbox.InstancePerCall, true
	}
	return in
}

// runCtx carries this call in its delegation chain to delegated calls, when the role may
// delegate; cand, if not nil, is the code under verification that runs (see callInfo.cand).
func (c *call) runCtx(ctx context.Context, cand *compiled) context.Context {
	if !c.rt.caps.Call {
		return ctx
	}
	if c.info == nil {
		c.info = &callInfo{trace: c.ev.TraceID, call: c.ev.CallID, role: c.role, method: c.method, parent: c.parent}
	}
	c.info.cand.Store(cand)
	return sandbox.WithCaller(ctx, c.info)
}

// delegate serves host Call: a nested forge call whose failure becomes the host call's error.
func (f *Forge) delegate(ctx context.Context, role, method string, args json.RawMessage) (json.RawMessage, error) {
	sandbox.ManagedCall(ctx)
	o := f.Call(ctx, role, method, args)
	if !o.OK {
		return nil, o.Err
	}
	return o.Value, nil
}

// runFailure classifies a failed run of this call's code that started at start: a deadline that
// was the caller's (ctx ended before the role's own limit) is not the code's; a chain past the
// delegation depth cap is blamed on the calls that made it (blameCallDepth).
func (c *call) runFailure(ctx context.Context, start time.Time, err error) *failure {
	fl := classifyErr(err, false)
	var se *sandbox.Error
	if !errors.As(err, &se) {
		return fl
	}
	switch {
	case se.Kind == sandbox.KindNotReplayable:
		if r := c.replayOf(); r != nil {
			r.notReplayable.Store(true)
		}
	case se.Kind == sandbox.KindCallDepth:
		c.blameCallDepth(se)
	case se.Kind == sandbox.KindDeadline && !se.HostCallInFlight:
		// The caller's deadline (reached, and earlier than the role's own limit) or its
		// cancellation; the sandbox's timer set to the same instant may have fired first.
		dl, ok := ctx.Deadline()
		if errors.Is(ctx.Err(), context.Canceled) || (ok && !time.Now().Before(dl) && dl.Before(start.Add(c.rt.limits.Timeout))) {
			fl = &failure{typ: fl.typ, result: classifier.Classify(classifier.Failure{Kind: classifier.KindDeadline, CallerDeadline: true}),
				msg: fl.msg + ": the caller's deadline or cancellation ended the call before the role's own limit (" + c.rt.limits.Timeout.String() +
					"); give the call more time"}
		}
	}
	if c.info != nil {
		if m := c.info.capHit.Load(); m != nil {
			fl = &failure{typ: string(sandbox.KindCallDepth), result: classifier.Classify(classifier.Failure{Kind: classifier.KindCallDepth}), msg: *m}
		}
	}
	return fl
}

// blameCallDepth runs in the call whose code made the delegation that went past the cap. The
// failure is intrinsic for this call and for every call of the chain whose role.method occurs in
// it more than once (they recursed: self-delegation, cycles of roles); a call that occurs once
// above the recursion only delegated to code that runs away, which is that code's fault.
func (c *call) blameCallDepth(se *sandbox.Error) {
	if c.info == nil {
		return
	}
	chain := c.info.CallChain()
	msg := se.Error()
	if !strings.Contains(msg, "→") {
		// The refusal came from a context that did not know the chain (an isolated worker).
		msg += " (chain: " + sandbox.FormatChain(chain) + ")"
	}
	seen := map[string]int{}
	for _, rm := range chain {
		seen[rm]++
	}
	for l := c.info; l != nil; l = l.parent {
		if l == c.info || seen[l.role+"."+l.method] > 1 {
			l.capHit.CompareAndSwap(nil, &msg)
		}
	}
}

// executePersisted runs the stored code; an intrinsic or adaptive failure leads to repair or
// regeneration within the budget, others are returned as they are.
func (c *call) executePersisted(ctx context.Context, art *registry.Artifact) Outcome {
	p, err := c.f.program(ctx, c.rt, art, c.client)
	if err == nil && c.hasDecided {
		// Decided by the selector for the store's snapshot: the next warm call reuses it.
		w := c.f.newWarmState(art, c.rt, c.decided, c.meta.Decision)
		if c.f.pins != nil {
			// Pin the store's snapshot when it is the one decided (a Load just cached it, or
			// Lookup returned it): the next warm call then checks it without the store's map.
			if a, pin, ok := c.f.pins.LookupPin(art.Role, art.Method); ok && a == art {
				w.pin = pin
			}
		}
		p.warm.Store(w)
		c.warm = w
	}
	c.hasDecided = false
	return c.executeProgram(ctx, art, p, err)
}

// executeProgram is executePersisted with the live program (and a reference to it) already
// taken, or the error that kept it from being compiled.
func (c *call) executeProgram(ctx context.Context, art *registry.Artifact, p *compiled, err error) Outcome {
	var gen int
	var archived bool
	if w := c.warm; w != nil && w.art == art {
		gen, archived = w.gen, w.archived
	} else {
		gen, archived = art.Generation, art.Lifecycle == registry.Archived
	}
	c.meta.ProgramSource, c.meta.ArtifactGen = SourcePersisted, gen
	var out sandbox.Output
	// When the run starts, for runFailure's deadline check. A warm hit has compiled nothing since
	// c.start, a few hundred ns ago: it reads no clock here.
	start := c.start
	if !c.warmHit {
		start = time.Now()
	}
	var sig sandbox.Signature
	if err == nil {
		out, err = p.sb.Run(c.runCtx(ctx, nil), p.prog, c.input(c.args))
		sig = p.prog.Signature()
		p.release() // an evicted or replaced program closes here if this was its last run
		c.ev.SandboxNS = int64(out.Duration)
		c.meta.Logs = out.Logs
		if err == nil {
			err = checkDeliverable(c.rt.deliverable, out)
		}
	}
	if err == nil {
		if !archived {
			c.endNow() // the call ends here: the recorder and the event share this reading
		}
		c.record(registry.Success, "")
		if archived {
			c.f.revive(art)
		}
		c.f.samples.offer(c.rt.rec.Sample, art, gen, c.role, c.method, c.client, c.args, out.Value, "")
		return Outcome{OK: true, Value: out.Value}
	}
	fl := c.runFailure(ctx, start, err)
	if p != nil {
		fl = c.judgeReturned(fl, c.args, sig)
	}
	fl = c.attribute(ctx, fl, art, sig) // health hook: one input counts once
	c.recordFailure(fl)
	if fl.result.Class == classifier.Intrinsic { // the code's own failure; never a caller's input
		c.f.samples.offer(c.rt.rec.Sample, art, gen, c.role, c.method, c.client, c.args, nil, fl.msg)
	}
	if fl.result.Rule == classifier.RuleCallDepthCap && c.ev.Depth > 0 {
		// Every call of a runaway chain fails at once: the top-level call repairs (it is blamed
		// too when the code recursed), not each level under its caller's deadline.
		return c.fail(fl)
	}
	plan := repair.AfterFailure(repair.Failed{Class: fl.result.Class, Lifecycle: selector.Lifecycle(art.Lifecycle),
		RepairCount: art.RepairCountSinceRegen, Budget: c.rt.budget, RepairOff: c.f.opts.Switches.RepairOff})
	if plan.Step == repair.StepNone {
		return c.fail(fl)
	}
	c.meta.RepairAttempted = plan.Step == repair.StepRepair
	c.cause = fl
	return c.produce(c.bound(ctx), art, plan.Trigger, &repair.Attempt{Code: art.Code, Error: fl.msg, Result: fl.result, Args: string(c.args)})
}

// bound returns ctx with CallWithin's timeout (from the call's start), made once; ctx itself
// when the call has no bound or already made it.
func (c *call) bound(ctx context.Context) context.Context {
	if c.within <= 0 || c.cancel != nil {
		return ctx
	}
	ctx, c.cancel = context.WithDeadline(ctx, c.start.Add(c.within))
	return ctx
}

// unbind ends the context bound made, if any.
func (c *call) unbind() {
	if c.cancel != nil {
		c.cancel()
	}
}

// warmRun runs a warm hit: the live program p (referenced) with its warm state w for art.
func (c *call) warmRun(ctx context.Context, art *registry.Artifact, p *compiled, w *warmState) Outcome {
	c.art, c.warm, c.warmHit = art, w, true
	c.ev.ArtifactHit = true
	c.ev.Action, c.ev.Reason, c.meta.Decision = w.action, w.reason, w.decision
	return c.executeProgram(ctx, art, p, nil)
}

// record counts the call's outcome against the generation that produced it (c.art's): the store
// keeps it out of another generation's recent window and health (registry.RecordBuffer.RecordGen),
// however late it is flushed.
func (c *call) record(o registry.Outcome, reason string) {
	if w := c.warm; w != nil && w.art == c.art && w.hasRec {
		if w.gen != 0 {
			w.rec.RecordGen(w.gen, o, c.elapsed(), reason)
		}
		return
	}
	if c.art == nil || c.art.Generation == 0 {
		return
	}
	c.f.rec.RecordGen(c.role, c.method, c.art.Generation, o, c.elapsed(), reason)
}

// elapsed is the call's duration so far: up to c.end once the call's end is taken (endNow), else
// up to a clock read of its own.
func (c *call) elapsed() time.Duration {
	if c.end.IsZero() {
		return time.Since(c.start)
	}
	return c.end.Sub(c.start)
}

// endNow takes the clock read that ends the call, once: the recorder, the Meta and the event then
// share it. It is taken only where nothing but the Outcome's return follows.
func (c *call) endNow() {
	if c.end.IsZero() {
		c.end = time.Now()
	}
}

func (c *call) recordFailure(fl *failure) {
	o, err := registry.OutcomeForClass(string(fl.result.Class))
	if err != nil {
		o = registry.ExtrinsicFailure
	}
	reason := fl.msg
	if fl.input != "" {
		reason += " " + fl.input // the next process knows the input (health.go)
	}
	c.record(o, reason)
}

func (c *call) fail(fl *failure) Outcome {
	c.ev.FailureType, c.ev.FailureClass, c.ev.FailureRule = fl.typ, string(fl.result.Class), string(fl.result.Rule)
	return Outcome{Err: fl.toError()}
}

// finish completes the Outcome's meta and emits the call's event.
func (c *call) finish(o Outcome) Outcome {
	c.endNow()
	d := c.elapsed()
	c.meta.Duration = d
	o.Meta = c.meta
	e := &c.ev
	e.OK = o.OK
	e.ProgramSource, e.ArtifactGen = c.meta.ProgramSource, c.meta.ArtifactGen
	e.RepairAttempted, e.RepairSucceeded = c.meta.RepairAttempted, c.meta.RepairSucceeded
	e.ProviderCalls, e.Tokens, e.DurationNS = c.meta.ProviderCalls, c.meta.Tokens, int64(d)
	var w *warmState
	if c.warm != nil && c.warm.art == c.art {
		w = c.warm
	}
	if c.art != nil {
		var ae artEvent
		if w != nil {
			ae = w.ev // the same fields, read once per snapshot
		} else {
			ae = artEventOf(c.art)
		}
		e.PromptVersion, e.ContractFingerprint = ae.promptVersion, ae.fingerprint
		e.SuccessCount, e.FailureCount = ae.success, ae.failure
		e.IntrinsicFailureCount, e.AdaptiveFailureCount, e.ExtrinsicFailureCount = ae.intrinsic, ae.adaptive, ae.extrinsic
		if e.GenerationTrigger == "" {
			e.GenerationTrigger = ae.trigger
		}
	}
	if c.f.events != nil || c.f.opts.EventSink != nil {
		if c.f.realClock {
			e.Time = c.end.UTC() // the reading that ended the call (elapsed)
		} else {
			e.Time = c.f.now().UTC()
		}
		if c.f.events != nil {
			var slot *atomic.Pointer[aggBucket]
			if w != nil {
				slot = &w.agg
			}
			c.f.events.emitVia(e, slot)
		}
		if c.f.opts.EventSink != nil {
			c.f.opts.EventSink(*e)
		}
	}
	return o
}

// revive makes an archived artifact that has just served a call durable again: pruning is about
// listings and prompt budget, and a call is proof the code is still wanted.
func (f *Forge) revive(art *registry.Artifact) {
	_, _ = f.update(art.Role, art.Method, func(a *registry.Artifact) error {
		if a.Lifecycle == registry.Archived && a.Generation == art.Generation {
			a.Lifecycle = registry.Durable
		}
		return nil
	})
}
