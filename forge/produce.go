package forge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
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

// Producing code for a call: generate (ask the provider, within the repair budget), verify (the
// gate: policy, compile, declared signature, acceptance examples and tests, the call's own args)
// and persist a new generation. call.go resolves and runs; this file makes what it runs.

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
	// client is the leading call's client (ClientFrom): whose input fail's text may echo.
	client string
}

// failFor is res's failure as a call of client that waited on the generation may read it: the
// leader's failure text (which may echo the leader's input: its own args are verified too)
// only for the leader's client and the client "" (a forge without client identities); another
// client reads its type, class and rule.
func (res *produced) failFor(role, method, client string) *failure {
	if client == "" || client == res.client {
		return res.fail
	}
	fl := *res.fail
	fl.args, fl.input = nil, ""
	fl.msg = fmt.Sprintf("the generation of %s.%s that another client's call led failed (%s/%s%s); call again, or ask the operator", role, method, fl.result.Class, fl.result.Rule, withheldNote)
	return &fl
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
	var held atomic.Bool // a model call the client's bound holds for this call's generation
	if !c.operator {
		fl, h := f.modelUse.allow(ClientFrom(ctx), f.now())
		if fl != nil {
			return c.fail(fl)
		}
		if h {
			held.Store(true)
			defer func() {
				if held.Swap(false) { // no model call of a generation this call led used it
					f.modelUse.unhold(ClientFrom(ctx))
				}
			}()
		}
	}
	// The generation works on its own copy of the call (copied back when this call led it and
	// saw it end), so that c itself never leaves this goroutine and stays off the heap on the
	// warm path.
	gc := new(call)
	*gc = *c
	gc.modelHold = &held
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
		res.client = ClientFrom(gctx)
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
		if !leader && !c.operator {
			return c.fail(res.failFor(c.role, c.method, ClientFrom(ctx)))
		}
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
		if !c.operator {
			f.modelUse.spendShared(ClientFrom(ctx), f.now(), c.modelHold != nil && c.modelHold.Swap(false))
		}
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
			req = req.WithEarlier(repair.Attempt{Code: ans.Code, Error: replayFeedback(c.tried), Result: bfl.result})
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
