package forge

import (
	"context"
	"errors"
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
// candidate, like any new code; running processes pick it up through watch mode.
func (f *Forge) Edit(ctx context.Context, role, method, code string) Outcome {
	c := &call{f: f, role: role, method: method, start: time.Now(), operator: true} // no call args for the gate to run
	c.ev.Role, c.ev.Method, c.ev.CallID = role, method, newID()
	c.ev.TraceID = c.ev.CallID
	c.ev.Action, c.ev.Reason = "edit", "operator"
	c.meta.Decision = "edit:operator"
	rt, err := f.roleRuntime(role)
	if err != nil {
		return c.finish(c.fail(roleFailure(role, err)))
	}
	c.rt = rt
	if err := registry.ValidateName("method", method); err != nil {
		return c.finish(c.fail(&failure{typ: "unknown_method", result: classifier.Result{Class: classifier.Caller, Rule: classifier.RuleArgs}, msg: err.Error()}))
	}
	trig := repair.ByOperator(repair.VerbEdit, "")
	var fl *failure
	err = f.store.WithGenerationLock(role, method, func() error {
		p, _, vf := c.verify(ctx, code)
		if vf != nil {
			fl = vf
			fl.typ = "gate"
			fl.msg = "the edited code did not pass the gate, nothing was stored: " + fl.msg
			return nil
		}
		art, _, err := c.persist(provider.Answer{Code: code, Model: "operator"}, p, trig)
		if err != nil {
			return err
		}
		c.art = art
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
