package forge

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/artifactforge/forge/classifier"
	"github.com/artifactforge/forge/provider"
	"github.com/artifactforge/forge/registry"
	"github.com/artifactforge/forge/repair"
)

// Edit makes code, written by an operator (`forge edit`, the server's edit verb), role.method's
// new generation with trigger operator:edit, after the same gate generated code goes through
// (policy, compile, declared signature, acceptance examples and tests). Code the gate refuses is
// not stored: the Outcome's error carries the gate's feedback. The generation starts as a
// candidate, like any new code (a blessed artifact is no longer blessed: EditLifecycle says so
// beforehand, and EditWith's KeepLifecycle keeps it); running processes pick it up through watch
// mode. Its event line (action "edit") names the client ctx carries (WithClient).
func (f *Forge) Edit(ctx context.Context, role, method, code string) Outcome {
	return f.EditWith(ctx, role, method, code, EditOptions{})
}

// EditOptions are an operator's choices for an edit.
type EditOptions struct {
	// KeepLifecycle keeps a blessed, durable or candidate artifact's lifecycle for the edited
	// code (an operator vouches for it) instead of making it a candidate. A quarantined,
	// degraded or archived artifact's edited code is a candidate either way.
	KeepLifecycle bool
	// AcceptChanges stores the code even when it changes answers of the sample of real calls
	// (safe regeneration, shadow.go).
	AcceptChanges bool
}

// EditLifecycle is the lifecycle an edit of an artifact whose lifecycle is cur gives the edited
// code: what an operator is told before the edit is stored.
func EditLifecycle(cur registry.Lifecycle, o EditOptions) registry.Lifecycle {
	if o.KeepLifecycle {
		switch cur {
		case registry.Blessed, registry.Durable, registry.Candidate:
			return cur
		}
	}
	return registry.Candidate
}

// EditWith is Edit with the operator's options.
func (f *Forge) EditWith(ctx context.Context, role, method, code string, opts EditOptions) Outcome {
	c := &call{f: f, role: role, method: method, start: time.Now(), operator: true, acceptChanges: opts.AcceptChanges} // no call args for the gate to run
	c.ev.Role, c.ev.Method, c.ev.CallID = role, method, newID()
	c.ev.TraceID = c.ev.CallID
	c.ev.Action, c.ev.Reason = OpEdit, reasonOperator
	c.ev.Who = f.who(ctx)
	c.meta.Decision = "edit:operator"
	rt, err := f.roleRuntime(role)
	if err != nil {
		return c.finish(c.fail(roleFailure(role, err)))
	}
	c.rt = rt
	if err := registry.ValidateName("method", method); err != nil {
		return c.finish(c.fail(&failure{typ: TypeUnknownMethod, result: classifier.Result{Class: classifier.Caller, Rule: classifier.RuleArgs}, msg: err.Error()}))
	}
	trig := repair.ByOperator(repair.VerbEdit, "")
	var fl *failure
	err = f.store.WithGenerationLock(role, method, func() error {
		cur, err := f.store.Load(role, method)
		if err == nil {
			c.ev.ArtifactGenBefore, c.ev.LifecycleBefore = cur.Generation, string(cur.Lifecycle)
			c.keep = EditLifecycle(cur.Lifecycle, opts)
			c.ev.Detail = fmt.Sprintf("%s -> %s", cur.Lifecycle, c.keep)
			if opts.KeepLifecycle {
				c.ev.Detail += " (keep lifecycle)"
			}
		}
		p, _, vf := c.verify(ctx, code)
		if vf != nil {
			fl = vf
			fl.typ = TypeGate
			fl.msg = "the edited code did not pass the gate, nothing was stored: " + fl.msg
			return nil
		}
		if err == nil && cur.Code != code {
			if fl = c.shadowGate(ctx, cur, p, nil); fl != nil {
				p.release()
				return nil
			}
		}
		art, _, err := c.persist(provider.Answer{Code: code, Model: "operator"}, p, trig)
		if err != nil {
			return err
		}
		c.art = art
		c.ev.Lifecycle = string(art.Lifecycle)
		return nil
	})
	if err != nil && fl == nil {
		fl = classifyErr(err, false)
	}
	if fl != nil {
		if errors.Is(err, registry.ErrNotFound) {
			fl.result = classifier.Result{Class: classifier.Caller, Rule: classifier.RuleArgs}
		}
		return c.finish(c.fail(fl))
	}
	c.meta.ArtifactGen = c.art.Generation
	c.meta.ProgramSource = SourceRegenerated
	c.ev.GenerationTrigger = trig.String()
	return c.finish(Outcome{OK: true})
}
