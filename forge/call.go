package forge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/artifactforge/forge/classifier"
	"github.com/artifactforge/forge/internal/jsonval"
	"github.com/artifactforge/forge/provider"
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
	// cause is the failure of the persisted code that sent this call to repair or regenerate,
	// if any: reported first when no code generator is there to fix it.
	cause *failure
	// warm is the warm path's cache entry of c.art (live.go), when the call used or made one;
	// decided holds the selector's Execute decision for c.art, to make one (executeProgram).
	warm       *warmState
	warmHit    bool // the call took the warm path (run): nothing was compiled or decided
	decided    selector.Decision
	hasDecided bool
}

// Call runs role.method with args (a JSON object by parameter name, or an array by position).
// A healthy persisted artifact runs with no provider call; otherwise the code is generated,
// repaired or regenerated first. The Outcome says what happened; Call never panics.
func (f *Forge) Call(ctx context.Context, role, method string, args json.RawMessage) Outcome {
	if !f.enter() {
		return Outcome{Err: closedFailure(role, method).toError()}
	}
	defer f.leave()
	c := &call{f: f, role: role, method: method, client: ClientFrom(ctx), args: args, start: time.Now()}
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
		return c.finish(c.executeCandidate(ctx, cand))
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
	if err := registry.ValidateName("method", c.method); err != nil {
		return c.fail(&failure{typ: TypeUnknownMethod, result: classifier.Result{Class: classifier.Caller, Rule: classifier.RuleArgs}, msg: err.Error()})
	}
	if len(rt.rec.Methods) > 0 {
		if _, ok := rt.rec.Methods[c.method]; !ok {
			return c.fail(&failure{typ: TypeUnknownMethod, result: classifier.Result{Class: classifier.Caller, Rule: classifier.RuleArgs},
				msg: fmt.Sprintf("role %s declares no method %s (it declares %s); add it to the contract with `forge role add`", c.role, c.method, methodList(rt.rec.Methods))})
		}
	}
	var loadErr error
	if !ok {
		art, loadErr = f.store.Load(c.role, c.method)
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

func methodList(m map[string]string) string {
	return strings.Join(slices.Sorted(maps.Keys(m)), ", ")
}

// input is the sandbox input for args under the role's grants and limits.
func (c *call) input(args json.RawMessage) sandbox.Input {
	in := sandbox.Input{Args: args, Caps: c.rt.caps, Limits: c.rt.limits}
	if c.rt.caps.Call {
		in.Call = c.f.delegate
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
		c.f.samples.offer(c.rt.rec.Sample, art, gen, c.role, c.method, c.args, out.Value, "")
		return Outcome{OK: true, Value: out.Value}
	}
	fl := c.runFailure(ctx, start, err)
	if p != nil {
		fl = c.judgeReturned(fl, c.args, sig)
	}
	fl = c.attribute(fl, art, sig) // health hook: one input counts once
	c.recordFailure(fl)
	if fl.result.Class == classifier.Intrinsic { // the code's own failure; never a caller's input
		c.f.samples.offer(c.rt.rec.Sample, art, gen, c.role, c.method, c.args, nil, fl.msg)
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
	return c.produce(ctx, art, plan.Trigger, &repair.Attempt{Code: art.Code, Error: fl.msg, Result: fl.result, Args: string(c.args)})
}

// warmRun runs a warm hit: the live program p (referenced) with its warm state w for art.
func (c *call) warmRun(ctx context.Context, art *registry.Artifact, p *compiled, w *warmState) Outcome {
	c.art, c.warm, c.warmHit = art, w, true
	c.ev.ArtifactHit = true
	c.ev.Action, c.ev.Reason, c.meta.Decision = w.action, w.reason, w.decision
	return c.executeProgram(ctx, art, p, nil)
}

// produced is what one generation (shared by concurrent callers) yields.
type produced struct {
	art   *registry.Artifact
	out   sandbox.Output // the leader's run with its own args
	fail  *failure       // set when no code could be produced, or the leader's run failed
	trig  repair.Trigger
	saved bool // persisted as the current generation
	// elsewhere: another process produced it while this one waited for the generation lock.
	elsewhere bool
	// unchanged: the verified answer was byte-identical to the current generation's code, so
	// no generation was added (the history keeps its real generations).
	unchanged bool
}

// produce writes new code for the call (generate, repair or regenerate), shared by concurrent
// callers of the same role.method in this process (single flight) and across processes (the
// generation lock), then answers the call with it.
//
// A top-level call's generation is detached from that call: it runs under its own deadline
// (Options.GenerationTimeout) with the call's values but not its cancellation, so a leader that
// gives up (cancel, deadline) fails alone and every other caller waiting on the same generation
// still gets it; each waiter, the leader included, honours its own context. A delegated call's
// generation stays under its delegation chain's context (it serves that chain, whose deadline
// bounds every wait in it; see RATIONALE, delegation).
func (c *call) produce(ctx context.Context, base *registry.Artifact, trig repair.Trigger, failed *repair.Attempt) Outcome {
	f := c.f
	// Waiting for a generation another call leads is external work for a delegation chain (see
	// sandbox.ExternalWork), and ends with the call's context: a delegated call must never wait
	// past its caller's deadline for a generation that may itself wait for the caller. The
	// generation runs on singleflight's goroutine; role says whether this call leads it and
	// whether a delegated leader gave up before it started.
	const (
		pending int32 = iota
		leading
		gaveUp
	)
	var role atomic.Int32
	detached := sandbox.CallDepth(ctx) == 0
	waiting := sync.OnceFunc(sandbox.ExternalWork(ctx))
	// The generation works on its own copy of the call (copied back when this call led it and
	// saw it end), so that c itself never leaves this goroutine and stays off the heap on the
	// warm path.
	gc := new(call)
	*gc = *c
	ch := f.flight.DoChan(c.role+"."+c.method, func() (any, error) {
		if !role.CompareAndSwap(pending, leading) {
			return &produced{fail: &failure{typ: string(sandbox.KindCapacity), result: classifier.Classify(classifier.Failure{Kind: classifier.KindCapacity}),
				msg: fmt.Sprintf("the call that was to generate %s.%s ended before it began; call again", gc.role, gc.method)}}, nil
		}
		waiting()
		gctx := ctx
		if detached {
			var cancel context.CancelFunc
			gctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), f.generationTimeout())
			defer cancel()
			defer context.AfterFunc(f.bg, cancel)() // Close ends it
		}
		if !f.enter() {
			return &produced{fail: closedFailure(gc.role, gc.method)}, nil
		}
		defer f.leave()
		var res *produced
		err := f.store.WithGenerationLock(gc.role, gc.method, func() error {
			if cur := gc.producedMeanwhile(base); cur != nil {
				res = &produced{art: cur, elsewhere: true} // run it like any follower
				return nil
			}
			res = gc.generate(gctx, base, trig, failed)
			return nil
		})
		if err != nil {
			res = &produced{fail: classifyErr(err, false)}
		}
		return res, nil
	})
	var v any
	select {
	case r := <-ch:
		v = r.Val
	case <-ctx.Done():
		waiting()
		if !detached && !role.CompareAndSwap(pending, gaveUp) && role.Load() == leading {
			v = (<-ch).Val // the generation sees the same context and ends soon
			break
		}
		what := "that another call is generating"
		if detached && role.Load() == leading {
			what = "that this call started generating (the generation goes on for the other callers and the next call)"
		}
		return c.fail(&failure{typ: string(sandbox.KindCapacity), result: classifier.Classify(classifier.Failure{Kind: classifier.KindCapacity}),
			msg: fmt.Sprintf("the call's context ended while it waited for the code of %s.%s %s; call again when that generation is done", c.role, c.method, what)})
	}
	waiting()
	res := v.(*produced)
	if role.Load() == leading {
		*c = *gc
	}
	leader := role.Load() == leading && !res.elsewhere
	if res.fail != nil && res.art == nil {
		return c.fail(res.fail)
	}
	c.art = res.art
	if !leader && c.operator {
		// An operator's regeneration that joined one already under way (in this process, or in
		// another one that held the generation lock): its result is this regeneration's result.
		// There are no args to run the code with.
		if res.fail != nil {
			return c.fail(res.fail)
		}
		c.meta.Joined = true
		c.meta.ArtifactGen, c.meta.ProgramSource = res.art.Generation, SourceRegenerated
		if len(res.art.History) > 0 {
			c.ev.GenerationTrigger = res.art.History[0].Trigger
		}
		return Outcome{OK: true}
	}
	if !leader {
		// Another caller produced the code: run it with this call's args.
		c.ev.ArtifactHit = true
		return c.executePersisted(ctx, res.art)
	}
	c.meta.ArtifactGen = res.art.Generation
	c.meta.ProgramSource = sourceOf(res.trig)
	c.meta.Unchanged = res.unchanged
	c.ev.GenerationTrigger = res.trig.String()
	if res.unchanged && len(res.art.History) > 0 {
		c.ev.GenerationTrigger = res.art.History[0].Trigger
	}
	if c.meta.RepairAttempted {
		c.meta.RepairSucceeded = res.saved
	}
	if res.fail == nil && res.unchanged && res.art.Lifecycle == registry.Quarantined && !c.operator {
		// The regeneration wrote the quarantined code again, byte for byte: the quarantine stands,
		// and this call must not be answered by the code an operator took out of service. (An
		// operator's own regeneration answers nobody; the CLI says the quarantine stands.)
		return c.fail(&failure{typ: TypeRefused, result: classifier.Result{Class: classifier.Extrinsic, Rule: classifier.Rule(selector.ReasonQuarantined)},
			msg: fmt.Sprintf("%s.%s is quarantined and its regeneration wrote the same code again, so the quarantine stands: "+
				"run `forge edit %s %s` to write the code yourself, `forge rollback %s %s` to restore an earlier generation, "+
				"`forge quarantine lift %s %s` if the quarantine was a mistake (the gate checks the code again), "+
				"or change the role's contract so that a regeneration writes other code", c.role, c.method, c.role, c.method, c.role, c.method, c.role, c.method)})
	}
	if res.fail != nil {
		// The stored code's failure that led here is counted already (executePersisted); the
		// failed repair stored nothing, so the call is not counted a second time. A failure of
		// code this call stored is that code's first outcome.
		if c.cause == nil || res.saved {
			c.recordFailure(res.fail)
		}
		return c.fail(res.fail)
	}
	c.record(registry.Success, "")
	c.meta.Logs = res.out.Logs
	return Outcome{OK: true, Value: res.out.Value}
}

// producedMeanwhile returns the artifact another goroutine or process produced while this call
// waited for the generation lock, if it is now fit to execute.
func (c *call) producedMeanwhile(base *registry.Artifact) *registry.Artifact {
	cur, err := c.f.store.Load(c.role, c.method)
	if err != nil || (base != nil && cur.Generation == base.Generation) {
		return nil
	}
	d := selector.Decide(selector.Input{Switches: c.f.opts.Switches, Role: c.role, Artifact: selectorArtifact(cur),
		Current: selector.Current{SchemaVersion: registry.SchemaVersion, RuntimeVersion: registry.RuntimeVersion,
			ContractFingerprint: c.rt.rec.Fingerprint, PromptVersion: PromptVersion},
		RepairsLeft: c.rt.budget.Remaining(cur.RepairCountSinceRegen)})
	if d.Action != selector.Execute {
		return nil
	}
	return cur
}

// generationTimeout bounds a generation detached from its callers (Options.GenerationTimeout).
func (f *Forge) generationTimeout() time.Duration {
	if f.opts.GenerationTimeout > 0 {
		return f.opts.GenerationTimeout
	}
	return DefaultGenerationTimeout
}

func sourceOf(t repair.Trigger) string {
	switch t.Kind {
	case repair.TriggerRepair:
		return SourceRepaired
	case repair.TriggerRegenerate, repair.TriggerOperator:
		return SourceRegenerated
	}
	return SourceGenerated
}

// generate asks the provider for code until an answer passes the gate and the call's own run,
// within the call's provider-call budget, and persists it.
func (c *call) generate(ctx context.Context, base *registry.Artifact, trig repair.Trigger, failed *repair.Attempt) *produced {
	f := c.f
	res := &produced{trig: trig}
	prov, err := f.providerOrErr()
	if err != nil {
		res.fail = c.noProvider(classifyErr(err, false), trig, failed)
		return res
	}
	sig := c.rt.declared(c.method)
	var req repair.Request
	if failed != nil && trig.Kind == repair.TriggerRepair {
		req = repair.NewRepair(c.role, c.method, c.rt.contract, sig, *failed)
	} else {
		replaced := repair.Attempt{}
		if failed != nil {
			replaced = *failed
		}
		req = repair.NewRegeneration(c.role, c.method, c.rt.contract, sig, trig, replaced)
	}
	if req.Signature == "" {
		req.Signature = "export func " + sandbox.ExportedName(c.method) + "(...) with parameters and results that fit the contract"
	}
	kind := provider.Generate
	if req.IsRepair() {
		kind = provider.Repair
	}
	// onArgs: the last code that passed the gate and failed on the call's args (health.go).
	var last, onArgs *failure
	kn := c.lessons(prov) // knowledge and assembler hook (knowledge.go, assemble.go)
	st := c.stepper(ctx)  // generation steps for the caller and the event streams (progress.go)
	defer func() { st.finished(res) }()
	for c.meta.ProviderCalls < f.opts.MaxProviderCalls {
		if ctx.Err() != nil {
			break
		}
		system, prompt, pfl := kn.assemble(req)
		if pfl != nil {
			res.fail = pfl
			return res
		}
		st.asking(prov, kind, c.meta.ProviderCalls+1, last)
		external := sandbox.ExternalWork(ctx)
		// Attempts are numbered 1..n within the call (FORGE_ATTEMPT for a command provider);
		// replay cassettes key answers by question or by order, never by this number alone.
		ans, err := prov.Generate(ctx, provider.Request{Kind: kind, Role: c.role, Method: c.method, Attempt: c.meta.ProviderCalls + 1,
			System: system, Prompt: prompt})
		external()
		kn.answered(ans)
		c.meta.ProviderCalls++
		c.meta.Tokens.InputTokens += ans.Usage.InputTokens
		c.meta.Tokens.OutputTokens += ans.Usage.OutputTokens
		c.meta.Tokens.CachedTokens += ans.Usage.CachedTokens
		if err != nil {
			fl := classifyErr(err, false)
			if provider.KindOf(err) == provider.BadAnswer {
				last = fl
				req = req.WithEarlier(repair.Attempt{Code: ans.Raw, Error: fl.msg, Result: classifier.Result{Class: classifier.Intrinsic, Rule: classifier.RuleCompile}})
				continue
			}
			res.fail = fl
			return res
		}
		st.answered(c.meta.ProviderCalls)
		prog, out, fl := c.verify(ctx, ans.Code)
		if c.info != nil {
			c.info.cand.Store(nil) // verified or not, this code is no longer the candidate
		}
		if fl != nil && (fl.result.Class == classifier.Intrinsic || fl.result.Class == classifier.Adaptive) {
			if prog != nil {
				prog.release() // passed the gate, failed the call's own run
			}
			last = fl
			if fl.args != nil {
				onArgs = fl
			}
			req = req.WithEarlier(repair.Attempt{Code: ans.Code, Error: fl.msg, Result: fl.result, Args: string(fl.args)})
			continue
		}
		if prog == nil {
			// A gate step failed for a reason that is not the code's (an outage during an
			// acceptance example, the sandbox's own failure): the gate could not decide. Nothing
			// is persisted, no provider call is spent on feedback, and the failure says so.
			res.fail = undecided(fl)
			return res
		}
		// The code passed the gate; a caller or extrinsic failure of this call's own run is not
		// the code's fault, so it is kept and the failure returned.
		res.out, res.fail = out, fl
		if f.opts.Switches.GenerateOnly {
			prog.release() // nothing is persisted, so nothing keeps it
			res.art = &registry.Artifact{Role: c.role, Method: c.method, Code: ans.Code, Generation: 0}
			return res
		}
		var failing json.RawMessage
		if failed != nil && failed.Args != "" {
			failing = json.RawMessage(failed.Args)
		}
		if bfl := c.shadowGate(ctx, base, prog, failing); bfl != nil {
			// Safe regeneration: the new code changes answers real calls got (shadow.go).
			prog.release()
			if c.operator {
				res.fail = bfl
				return res
			}
			last = bfl // a repair is asked again with the changed answers, within the budget
			req = req.WithEarlier(repair.Attempt{Code: ans.Code, Error: replayFeedback(c.meta.Replay), Result: bfl.result})
			continue
		}
		art, unchanged, err := c.persist(ans, prog, trig)
		if err != nil {
			prog.release()
			res.fail = classifyErr(err, false)
			return res
		}
		res.art, res.saved, res.unchanged = art, true, unchanged
		kn.passed(req) // knowledge hook
		return res
	}
	if last == nil {
		last = &failure{typ: TypeDeadline, result: classifier.Classify(classifier.Failure{Kind: classifier.KindDeadline}), msg: "the call's context ended before an answer was verified"}
	}
	res.fail = &failure{typ: TypeGate, result: last.result,
		msg: fmt.Sprintf("no generated code passed verification after %d provider call(s); last failure: %s", c.meta.ProviderCalls, last.msg)}
	if c.operator {
		// An operator asked for new code and none was usable: that says nothing about the
		// current code, which keeps its lifecycle and counters.
		if base != nil {
			res.fail.msg += fmt.Sprintf("; the current generation %d of %s.%s is unchanged (lifecycle %s, counters kept)", base.Generation, c.role, c.method, base.Lifecycle)
		}
		return res
	}
	if fl := c.inputSpecific(base, onArgs, c.meta.ProviderCalls); fl != nil {
		res.fail = fl // health hook: the input's failure leaves the code as it is
		return res
	}
	if base != nil && base.Lifecycle != registry.Blessed && base.Lifecycle != registry.Quarantined && !f.opts.Switches.GenerateOnly {
		// The persisted code failed and could not be fixed in this call: mark it degraded so the
		// next call tries again (repair first while the budget lasts).
		if a, err := f.update(c.role, c.method, func(a *registry.Artifact) error {
			if a.Generation == base.Generation {
				a.Lifecycle = registry.Degraded
			}
			return nil
		}); err == nil {
			res.art = a
		}
	}
	return res
}

// noProvider is the failure of a call that needs new code when no code generator is configured.
// When the persisted code failed first, that failure is the call's failure (its class, rule and
// message come first); the missing generator is what kept it from being repaired, and the
// message ends with how to configure one.
func (c *call) noProvider(pf *failure, trig repair.Trigger, failed *repair.Attempt) *failure {
	what := "writing its code"
	switch trig.Kind {
	case repair.TriggerRepair:
		what = "repairing it"
	case repair.TriggerRegenerate, repair.TriggerOperator:
		what = "regenerating it"
	}
	switch {
	case c.cause != nil:
		return &failure{typ: c.cause.typ, result: c.cause.result,
			msg: fmt.Sprintf("%s failure (rule %s): %s; %s needs a code generator and none is configured: %s",
				c.cause.result.Class, c.cause.result.Rule, c.cause.msg, what, pf.msg)}
	case failed != nil && failed.Error != "" && !c.operator:
		// The selector sent the call to repair (a degraded or stale artifact): say why first.
		return &failure{typ: pf.typ, result: pf.result,
			msg: fmt.Sprintf("%s.%s needs new code: %s; %s needs a code generator and none is configured: %s",
				c.role, c.method, failed.Error, what, pf.msg)}
	}
	return pf
}

// verify is the gate: policy and compile in the target sandbox, the declared signature, the
// contract's acceptance examples and tests, then the call's own args and the deliverable schema.
//
// The program it returns holds one reference, the caller's: persist hands it to the live set,
// any other end releases it.
func (c *call) verify(ctx context.Context, code string) (ret *compiled, _ sandbox.Output, _ *failure) {
	sb, err := c.f.sandbox(c.rt.backend)
	if err != nil {
		return nil, sandbox.Output{}, classifyErr(err, false)
	}
	src := sandbox.Source{Code: code, Func: c.method, Limits: c.rt.limits, Client: c.client}
	prog, err := sb.Compile(ctx, src)
	if err != nil {
		return nil, sandbox.Output{}, classifyErr(err, false)
	}
	p := newCompiled(nil, prog, sb, c.f.programs)
	p.client = c.client // it ran this client's args: it serves this client only
	defer func() {
		if ret == nil {
			p.release() // code that did not pass is closed (when no delegated run holds it)
		}
	}()
	if fl := checkDeclared(c.rt.declared(c.method), prog.Signature()); fl != nil {
		return nil, sandbox.Output{}, fl
	}
	if acc := c.rt.rec.Acceptance; acc != nil {
		// The examples run twice in a row when the role's code cannot see time, randomness or the
		// outside world: a second answer that differs from the first means the code keeps state
		// between calls (package-level variables), which every later call would inherit.
		rounds := 1
		if c.rt.caps.HTTP == nil && !c.rt.caps.Now && !c.rt.caps.Rand && !c.rt.caps.Call {
			rounds = 2
		}
		for round := 1; round <= rounds; round++ {
			for i, ex := range acc.Examples {
				if ex.Method != "" && ex.Method != c.method {
					continue
				}
				start := time.Now()
				out, err := sb.Run(c.runCtx(ctx, p), prog, c.input(ex.Args))
				if ex.ExpectError != "" {
					if fl := checkExpectedError(c.runFailure(ctx, start, err), i+1, ex, out); fl != nil {
						return nil, out, fl
					}
					continue
				}
				if err != nil {
					fl := c.runFailure(ctx, start, err)
					switch {
					case fl.typ == string(sandbox.KindReturned) && fl.result.Class == classifier.Caller:
						// An error returned on purpose where the contract wants a value.
						fl = acceptanceFailure(fmt.Sprintf("acceptance example %d: args %s: want %s, got the error %q", i+1, ex.Args, ex.Expect, fl.msg))
					case fl.result.Class == classifier.Caller:
						fl = acceptanceFailure(fmt.Sprintf("acceptance example %d: args %s do not fit the code's signature: %s", i+1, ex.Args, fl.msg))
					default:
						fl.msg = fmt.Sprintf("acceptance example %d (args %s): %s", i+1, ex.Args, fl.msg)
					}
					return nil, out, fl
				}
				if !jsonval.Equal(out.Value, ex.Expect) {
					if round > 1 {
						return nil, out, acceptanceFailure(fmt.Sprintf("acceptance example %d: args %s: want %s, got %s when called again "+
							"(it was right the first time): the code keeps state between calls; make the function depend only on its arguments, "+
							"with no package-level variables that it changes", i+1, ex.Args, ex.Expect, out.Value))
					}
					return nil, out, acceptanceFailure(fmt.Sprintf("acceptance example %d: args %s: want %s, got %s", i+1, ex.Args, ex.Expect, out.Value))
				}
			}
		}
		if tests := testsFor(acc, c.method, prog.Signature().Func); tests != "" {
			tester, ok := sb.(sandbox.Tester)
			if !ok {
				return nil, sandbox.Output{}, &failure{typ: TypeInternal, result: classifier.Classify(classifier.Failure{Kind: classifier.KindInternal}),
					msg: fmt.Sprintf("sandbox %s cannot run acceptance tests", c.rt.backend)}
			}
			results, err := tester.Test(ctx, src, tests, c.input(nil))
			if err != nil {
				return nil, sandbox.Output{}, classifyErr(err, false)
			}
			var failed []string
			for _, r := range results {
				if !r.Passed {
					failed = append(failed, r.Name+": "+r.Message)
				}
			}
			if len(failed) > 0 {
				return nil, sandbox.Output{}, acceptanceFailure(fmt.Sprintf("%d of %d acceptance test(s) failed: %s", len(failed), len(results), strings.Join(failed, "; ")))
			}
		}
	}
	if c.operator || (c.args == nil && needsArgs(prog.Signature())) {
		// An operator's regeneration or edit has no args to run, and a call with no args (nil)
		// to a method that takes some forges the code without running it (the gate is what it
		// proves). A method that takes none is called by nil args: its call is run and answered
		// like any other (it used to be skipped, so the first call had no value).
		return p, sandbox.Output{}, nil
	}
	start := time.Now()
	out, err := sb.Run(c.runCtx(ctx, p), prog, c.input(c.args))
	c.ev.SandboxNS = int64(out.Duration)
	var fl *failure
	if err != nil {
		fl = c.judgeReturned(c.runFailure(ctx, start, err), c.args, prog.Signature())
	} else if err = checkDeliverable(c.rt.deliverable, out); err != nil {
		fl = classifyErr(err, false)
	}
	if fl != nil {
		fl.args = c.args
	}
	return p, out, fl
}

// undecided is the failure of a gate that could not judge the code: a step failed with a class
// that does not count against the code (extrinsic, internal). The class is kept (an outage stays
// retriable); a caller class cannot come from the code's own gate steps, so it is the forge's.
func undecided(fl *failure) *failure {
	if fl == nil {
		return &failure{typ: TypeInternal, result: classifier.Classify(classifier.Failure{Kind: classifier.KindInternal}),
			msg: "the gate returned neither a program nor a failure; nothing was persisted: report this as a forge bug"}
	}
	res := fl.result
	if res.Class == classifier.Caller {
		res = classifier.Classify(classifier.Failure{Kind: classifier.KindInternal})
	}
	return &failure{typ: fl.typ, result: res,
		msg: "the generated code could not be verified, so nothing was persisted: " + fl.msg + "; call again when the cause is gone (the code is verified again then)"}
}

// checkExpectedError judges an acceptance example that expects an error (expect_error): the code
// must return an error of its own whose message contains ex.ExpectError. fl is the run's
// classified failure (nil when it returned a value); a failure that is not a returned error
// (a panic, a deadline, an outage) is kept as it is.
func checkExpectedError(fl *failure, n int, ex registry.Example, out sandbox.Output) *failure {
	switch {
	case fl == nil:
		return acceptanceFailure(fmt.Sprintf("acceptance example %d: args %s: want an error containing %q, got the value %s", n, ex.Args, ex.ExpectError, out.Value))
	case fl.typ != string(sandbox.KindReturned):
		if fl.result.Class == classifier.Caller {
			return acceptanceFailure(fmt.Sprintf("acceptance example %d: args %s do not fit the code's signature: %s", n, ex.Args, fl.msg))
		}
		fl.msg = fmt.Sprintf("acceptance example %d (args %s, want an error containing %q): %s", n, ex.Args, ex.ExpectError, fl.msg)
		return fl
	case !strings.Contains(fl.msg, ex.ExpectError):
		return acceptanceFailure(fmt.Sprintf("acceptance example %d: args %s: want an error containing %q, got the error %q", n, ex.Args, ex.ExpectError, fl.msg))
	}
	return nil
}

// judgeReturned makes an error the code returned on purpose (caller/returned_answer) the code's
// own fault when the contract says these args must succeed: an acceptance example of the method
// with the same args expects a value.
func (c *call) judgeReturned(fl *failure, args json.RawMessage, sig sandbox.Signature) *failure {
	if fl == nil || fl.result.Rule != classifier.RuleReturnedAnswer || c.rt.rec.Acceptance == nil {
		return fl
	}
	want := normalArgs(args, sig)
	if want == nil {
		return fl
	}
	for i, ex := range c.rt.rec.Acceptance.Examples {
		if (ex.Method != "" && ex.Method != c.method) || ex.ExpectError != "" {
			continue
		}
		if got := normalArgs(ex.Args, sig); got != nil && reflect.DeepEqual(got, want) {
			return &failure{typ: fl.typ, result: classifier.Classify(classifier.Failure{Kind: classifier.KindReturned, ValueExpected: true}),
				msg: fmt.Sprintf("%s: acceptance example %d expects the value %s for these args", fl.msg, i+1, ex.Expect)}
		}
	}
	return fl
}

// normalArgs decodes call args into a map by parameter name (positional args are named from the
// signature), or nil when they do not decode.
func normalArgs(args json.RawMessage, sig sandbox.Signature) map[string]any {
	var v any
	if json.Unmarshal(args, &v) != nil {
		return nil
	}
	switch a := v.(type) {
	case map[string]any:
		return a
	case []any:
		if len(a) > len(sig.Params) {
			return nil
		}
		m := make(map[string]any, len(a))
		for i, x := range a {
			m[sig.Params[i].Name] = x
		}
		return m
	}
	return nil
}

func acceptanceFailure(msg string) *failure {
	return &failure{typ: TypeAcceptance, result: classifier.Classify(classifier.Failure{Kind: classifier.KindAcceptance}), msg: msg}
}

// testsFor picks the acceptance test source for a method: its own, else the role's tests when
// they call the method's function.
func testsFor(acc *registry.Acceptance, method, fn string) string {
	if t := acc.MethodTests[method]; t != "" {
		return t
	}
	if acc.Tests != "" && strings.Contains(acc.Tests, fn+"(") {
		return acc.Tests
	}
	return ""
}

// checkDeclared compares the code's signature with the contract's declared one, if any.
func checkDeclared(declared string, got sandbox.Signature) *failure {
	if declared == "" {
		return nil
	}
	want, err := sandbox.ParseSignature(sandbox.Source{Code: "package artifact\n" + strings.TrimSuffix(strings.TrimSpace(declared), "{") + " { panic(0) }"})
	if err != nil {
		return nil // the contract's declaration is checked when the role is added
	}
	if declOf(want) != declOf(got) {
		return &failure{typ: TypeCompile, result: classifier.Classify(classifier.Failure{Kind: classifier.KindCompile}),
			msg: fmt.Sprintf("signature mismatch: the contract declares %s, the code has %s", declOf(want), declOf(got))}
	}
	return nil
}

// declOf renders a signature as a Go declaration, "func Upper(s string) string".
func declOf(s sandbox.Signature) string {
	var b strings.Builder
	b.WriteString("func ")
	b.WriteString(s.Func)
	b.WriteByte('(')
	for i, p := range s.Params {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(p.Name)
		b.WriteByte(' ')
		if s.Variadic && i == len(s.Params)-1 {
			b.WriteString("...")
			b.WriteString(strings.TrimPrefix(p.Type, "[]"))
		} else {
			b.WriteString(p.Type)
		}
	}
	b.WriteByte(')')
	switch s.Shape {
	case sandbox.ResultValue:
		b.WriteString(" " + s.Result)
	case sandbox.ResultValueError:
		b.WriteString(" (" + s.Result + ", error)")
	case sandbox.ResultError:
		b.WriteString(" error")
	}
	return b.String()
}

// persist makes verified code the current generation.
func (c *call) persist(ans provider.Answer, p *compiled, trig repair.Trigger) (*registry.Artifact, bool, error) {
	if p == nil || p.prog == nil {
		// Never reached while generate checks the gate's verdict; kept so that a future path
		// that forgets cannot persist unverified code or crash the process.
		return nil, false, errors.New("forge: refusing to persist code without a verified program; this is a forge bug, report it")
	}
	now := c.f.now().UTC()
	sig := p.prog.Signature()
	unchanged := false
	art, err := c.f.store.Update(c.role, c.method, func(a *registry.Artifact, _ bool) error {
		unchanged = false
		if a.Generation > 0 && a.Code == ans.Code && a.ContractFingerprint == c.rt.rec.Fingerprint {
			// The answer is the current code, byte for byte: a new generation would only push a
			// real one out of the kept history. The code passed the gate again, so a degraded
			// artifact becomes a candidate; a forced regeneration is done.
			unchanged = true
			a.ForceRegenerate = false
			// It passed this forge's gate: it records what it was verified against now, or a
			// runtime-incompatible artifact would regenerate on every call (same answer, again).
			a.RuntimeVersion, a.SchemaVersion = registry.RuntimeVersion, registry.SchemaVersion
			if a.Lifecycle == registry.Degraded {
				a.Lifecycle = registry.Candidate
			}
			return nil
		}
		a.Promote(ans.Code, trig.String(), ans.Model, PromptVersion, now)
		c.keepReplay(a)
		a.Lifecycle = registry.Candidate
		if c.keep != "" {
			a.Lifecycle = c.keep
		}
		a.ContractFingerprint = c.rt.rec.Fingerprint
		a.Signature = registry.Signature{Func: sig.Func, Decl: declOf(sig), ParamsSchema: sig.ParamsSchema}
		a.RepairCountSinceRegen = repair.NextRepairCount(trig, a.RepairCountSinceRegen)
		if trig.Kind == repair.TriggerRepair {
			a.LastRepairedAt = &now
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	p.art = art
	c.f.programs.put(p) // the live set takes the generation's reference; the replaced program closes after its last run
	return art, unchanged, nil
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
