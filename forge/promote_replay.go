package forge

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/artifactforge/forge/registry"
)

// Safe regeneration on the operator's paths that put other code in front of callers without
// writing it: a rollback to a kept generation, lifting a quarantine, restoring quarantined code.
// Each replays the sample of real calls on the code about to answer and applies ShadowPolicy, as
// a regeneration does (shadow.go).

// PromoteOptions are an operator's choices for a rollback, a lifted quarantine or a restore.
type PromoteOptions struct {
	// AcceptChanges promotes the code even when it changes answers of the sample of real calls.
	AcceptChanges bool
}

// ErrReplayChanged is wrapped by the error of an operator action that the replay of the sample
// of real calls refused (the code about to answer changes answers callers got).
var ErrReplayChanged = errors.New("changes answers of the sample of real calls")

// promoteReplay replays cur's sample on code, about to answer in place of cur's code, and applies
// the policy. It returns the call that holds the replay (for keepReplay; nil when nothing was
// replayed: the same code, no sample, no contract to run it under) and the error that refuses the
// promotion. verb "lift" replays code that is cur's own too (a lifted quarantine: the code may
// answer otherwise now that a runtime changed).
func (f *Forge) promoteReplay(ctx context.Context, cur *registry.Artifact, code, verb string, o PromoteOptions) (*call, error) {
	if len(cur.Sample) == 0 || registry.Checksum(code) == cur.CodeChecksum && verb != "lift" {
		return nil, nil
	}
	rt, err := f.roleRuntime(cur.Role)
	if err != nil {
		return nil, nil // no contract to run it under: the action goes on as before the sample
	}
	p, err := f.compileKept(ctx, rt, cur.Role, cur.Method, code)
	if err != nil {
		return nil, err
	}
	defer p.release()
	c := &call{f: f, role: cur.Role, method: cur.Method, start: time.Now(), operator: true, rt: rt, acceptChanges: o.AcceptChanges}
	if fl := c.shadowGate(ctx, cur, p, nil); fl != nil {
		return c, fmt.Errorf("forge: %s: %w", fl.msg, ErrReplayChanged)
	}
	if c.replay == nil {
		return nil, nil
	}
	return c, nil
}

// RollbackWith is RollbackContext with the operator's options: the kept generation's code
// replays the sample of real calls first, and the rollback is refused when the policy says so
// (a blessed artifact whose answers would change, unless AcceptChanges).
func (f *Forge) RollbackWith(ctx context.Context, role, method string, gen int, o PromoteOptions) (*registry.Artifact, error) {
	start := time.Now()
	detail := "to the previous generation"
	if gen > 0 {
		detail = "to " + registry.GenerationID(gen)
	}
	e := f.opEvent(ctx, OpRollback, role, method, detail)
	var art *registry.Artifact
	loaded, written := false, false // written: operateEvent wrote the action's line
	err := f.store.WithGenerationLock(role, method, func() error {
		cur, err := f.store.Load(role, method)
		if err != nil {
			return nil // the update below says it
		}
		loaded = true
		target := gen
		if target == 0 {
			target = cur.Generation - 1
		}
		var c *call
		verb := "rollback"
		if target == cur.Generation && cur.Lifecycle == registry.Quarantined {
			verb = "lift" // the same code answers again: replayed as a lifted quarantine is
		}
		if code, cerr := generationCode(cur, target, "rollback"); cerr == nil && target >= 1 && (target != cur.Generation || verb == "lift") {
			if c, err = f.promoteReplay(ctx, cur, code, verb, o); c != nil {
				e.Replay = c.ev.Replay
			}
			if err != nil {
				e.ArtifactGenBefore, e.LifecycleBefore = cur.Generation, string(cur.Lifecycle)
				e.setAfter(cur)
				return err
			}
		}
		written = true
		art, err = f.operateEvent(start, e, role, method, func(a *registry.Artifact) error {
			if a.Generation != cur.Generation {
				return fmt.Errorf("forge: %s.%s changed while its kept code was replayed (now gen %d): run the command again if it is still wanted", role, method, a.Generation)
			}
			if err := a.Rollback(gen, f.now()); err != nil {
				return err
			}
			switch {
			case c == nil:
			case a.Generation != cur.Generation:
				c.keepReplay(a)
			case c.replay.Changed+c.replay.NowSucceeds > 0: // a lifted quarantine: the answers it gives now
				a.Sample = c.replay.entries(a.Generation, c.rt.rec.Sample)
			}
			return nil
		})
		return err
	})
	switch {
	case err == nil && !loaded: // the update says why, on the action's line
		return f.operateEvent(start, e, role, method, func(a *registry.Artifact) error { return a.Rollback(gen, f.now()) })
	case err != nil && !written:
		f.emitOp(e, start, err) // refused before the update
	}
	return art, err
}

// restoreReplay judges code a restore has just made before's successor (the store's Restore
// promotes it: forge cannot see the quarantined code beforehand on every backend): it replays
// before's sample on it and, when the policy refuses it, rolls back to before's code at once (a
// new generation with before's lifecycle and sample; the restored code stays in the history).
// Calls between the restore and the roll back run the restored code, as every restore did
// before the sample. The caller holds the generation lock.
func (f *Forge) restoreReplay(ctx context.Context, e *Event, before *registry.Artifact, o PromoteOptions) error {
	now, err := f.store.Load(before.Role, before.Method)
	if err != nil || now.Generation == before.Generation {
		return nil
	}
	c, rerr := f.promoteReplay(ctx, before, now.Code, "restore", o)
	if c != nil {
		e.Replay = c.ev.Replay
	}
	if rerr == nil {
		if c != nil {
			_, err = f.update(before.Role, before.Method, func(a *registry.Artifact) error {
				if a.Generation == now.Generation {
					c.keepReplay(a)
				}
				return nil
			})
		}
		return err
	}
	if !errors.Is(rerr, ErrReplayChanged) {
		return rerr
	}
	back, err := f.update(before.Role, before.Method, func(a *registry.Artifact) error {
		if a.Generation != now.Generation {
			return nil // another action came first
		}
		if err := a.Rollback(before.Generation, f.now()); err != nil {
			return err
		}
		switch before.Lifecycle {
		case registry.Blessed, registry.Durable, registry.Candidate:
			a.Lifecycle = before.Lifecycle
		}
		for _, s := range before.Sample { // before's code answers as before
			s.Gen = a.Generation
			a.Sample = append(a.Sample, s)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%w; rolling the restored code back failed too: %v", rerr, err)
	}
	r := c.meta.Replay
	return fmt.Errorf("forge: the restored code of %s.%s (gen-%d) was rolled back: %s (%s); gen-%d runs the code of gen-%d again. Changed answers:%s\nIf the new answers are right, `forge rollback %s %s %d --accept-changes` makes the restored code current: %w",
		before.Role, before.Method, now.Generation, r.Blocked, r.Summary(), back.Generation, before.Generation, r.changedLines(), before.Role, before.Method, now.Generation, ErrReplayChanged)
}
