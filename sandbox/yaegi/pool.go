package yaegi

import (
	"context"
	"sync"
	"time"

	"github.com/artifactforge/forge/sandbox"
)

// A program's interpreters: a LIFO pool, and trimming.
//
// Calls take the most recently used idle interpreter, so that the others stay idle when the load
// drops and the sweeper can tell. A sandbox-wide sweeper (one goroutine while any program has
// something to do) ends, for each program with more than one interpreter, the interpreters
// beyond the first that have been idle for Options.IdleTimeout. An interpreter holds no
// goroutine (calls run on the caller's, see instance.call), so a program with one interpreter is
// out of the sweeper's set.

// programCleanup is what runs once an unclosed program is unreachable.
type programCleanup struct {
	end     context.CancelFunc
	release func()
}

// closedError is the error of a call that found its program (or its sandbox) closed under it.
func (p *Program) closedError() error {
	if p.sb != nil && p.sb.closed.Load() {
		return sandbox.Errorf(sandbox.KindInternal, "yaegi: sandbox closed during the call")
	}
	return sandbox.Errorf(sandbox.KindInternal, "yaegi: program closed during the call (a forge bug: programs are closed only when no call uses them)")
}

// get returns an interpreter for a call: an idle one, a new one within the pool size, or, when all
// are busy, the first to come back within timeout.
func (p *Program) get(ctx context.Context, timeout time.Duration) (*instance, error) {
	select {
	case <-p.avail:
		return p.take()
	default:
	}
	if sandbox.CallDepth(ctx) > 0 {
		// A delegated call: its ancestors may hold every pooled interpreter while they wait for
		// it, so it never waits for one. It takes a free slot, or makes an interpreter beyond the
		// pool size (at most one per level of the chain, so bounded by Limits.MaxCallDepth).
		select {
		case inst := <-p.spare:
			return p.ready(inst)
		case p.sem <- struct{}{}:
			inst, err := p.newInstance(ctx)
			if err != nil {
				<-p.sem
				return nil, err
			}
			return p.ready(inst)
		default:
		}
		inst, err := p.newInstance(ctx)
		if err != nil {
			return nil, err
		}
		inst.extra = true
		return p.ready(inst)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	select {
	case p.sem <- struct{}{}:
		inst, err := p.newInstance(ctx)
		if err != nil {
			<-p.sem
			return nil, err
		}
		return p.ready(inst)
	case <-p.avail:
		return p.take()
	case <-ctx.Done():
		return nil, &sandbox.Error{Kind: sandbox.KindCapacity, Message: "no free interpreter within the deadline (all busy with other calls): retry later, or raise the pool size", Err: ctx.Err()}
	}
}

// getFresh is get for a per-call program (sandbox.InstancePerCall): an interpreter no call has
// run in. An idle one that served a call gives its slot to a new one and is dropped.
func (p *Program) getFresh(ctx context.Context, timeout time.Duration) (*instance, error) {
	inst, err := p.get(ctx, timeout)
	if err != nil || !inst.ran {
		return inst, err
	}
	fresh, err := p.newInstance(ctx)
	if err != nil {
		p.put(inst, false) // frees its slot
		return nil, err
	}
	fresh.extra = inst.extra // the slot (or none) passes to the new interpreter
	return p.ready(fresh)
}

// take pops the most recently used idle interpreter; the caller holds its avail token.
func (p *Program) take() (*instance, error) {
	p.mu.Lock()
	n := len(p.idle)
	if n == 0 {
		p.mu.Unlock()
		return nil, p.closedError() // Close emptied the pool
	}
	inst := p.idle[n-1]
	p.idle[n-1] = nil
	p.idle = p.idle[:n-1]
	p.mu.Unlock()
	return p.ready(inst)
}

// ready checks that the program may still run a call on inst (it is not closed).
func (p *Program) ready(inst *instance) (*instance, error) {
	if p.life.Err() != nil {
		p.discard(inst)
		return nil, p.closedError()
	}
	return inst, nil
}

// discard drops an interpreter that leaves the pool (the collector frees it).
func (p *Program) discard(inst *instance) {
	if !inst.extra {
		<-p.sem
	}
}

func (p *Program) put(inst *instance, ok bool) {
	if !ok {
		p.discard(inst)
		return
	}
	sl := inst.slot
	sl.setHost(nil)
	sl.ctx, sl.in, sl.args = nil, sandbox.Input{}, nil
	sl.outJSON, sl.errText, sl.badErr = nil, "", nil
	if inst.extra {
		// An interpreter made beyond the pool joins it if a slot is free; else it waits idle
		// for the next deep chain if there is room (sandbox.DefaultMaxCallDepth of them), or ends.
		select {
		case p.sem <- struct{}{}:
			inst.extra = false
		default:
			select {
			case p.spare <- inst:
				p.arm()
			default:
			}
			return
		}
	}
	p.mu.Lock()
	if p.closedP.Load() {
		p.mu.Unlock()
		p.discard(inst)
		return
	}
	p.idle = append(p.idle, inst)
	p.mu.Unlock()
	p.avail <- struct{}{}
	// Arm after pushing (see sweeper.loop); a lone interpreter leaves the sweeper nothing to do.
	if !p.armed.Load() && len(p.sem) > 1 {
		p.arm()
	}
}

// arm puts the program in its sandbox's sweep set.
func (p *Program) arm() {
	if p.sb.sweeper == nil || !p.armed.CompareAndSwap(false, true) {
		return
	}
	p.sb.sweeper.add(p)
}

// quiet reports whether the sweeper has nothing left to do for the program: no interpreter
// beyond the first, no spare.
func (p *Program) quiet() bool {
	if p.closedP.Load() {
		return true
	}
	return len(p.sem) <= 1 && len(p.spare) == 0
}

// sweep trims the program's idle interpreters (see the comment at the top).
func (p *Program) sweep(now time.Time, idleTimeout time.Duration) {
	if p.closedP.Load() {
		return
	}
	p.mu.Lock()
	for len(p.idle) > 0 && len(p.sem) > 1 && now.Sub(p.idle[0].used) >= idleTimeout {
		select {
		case <-p.avail:
		default:
			p.mu.Unlock()
			return // a call is about to take an interpreter: leave the pool to it
		}
		n := copy(p.idle, p.idle[1:])
		p.idle[n] = nil
		p.idle = p.idle[:n]
		<-p.sem
	}
	p.mu.Unlock()
	// Spares (interpreters beyond the pool size, for delegation chains) end with the program's
	// idleness.
	for range len(p.spare) {
		select {
		case inst := <-p.spare:
			if now.Sub(inst.used) >= idleTimeout {
				continue
			}
			select {
			case p.spare <- inst:
			default:
			}
		default:
		}
	}
}

// DefaultIdleTimeout is the default of Options.IdleTimeout.
const DefaultIdleTimeout = 30 * time.Second

// sweeper trims the pools of the sandbox's armed programs, from one goroutine that runs while
// any program is armed.
type sweeper struct {
	idleTimeout, tick time.Duration
	life              context.Context
	mu                sync.Mutex
	progs             map[*Program]struct{}
	running           bool
}

func newSweeper(life context.Context, idleTimeout time.Duration) *sweeper {
	if idleTimeout <= 0 {
		return nil
	}
	tick := max(min(idleTimeout/2, time.Second), 5*time.Millisecond)
	return &sweeper{idleTimeout: idleTimeout, tick: tick, life: life, progs: map[*Program]struct{}{}}
}

func (w *sweeper) add(p *Program) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.progs[p] = struct{}{}
	if !w.running && w.life.Err() == nil {
		w.running = true
		go w.loop()
	}
}

func (w *sweeper) loop() {
	t := time.NewTicker(w.tick)
	defer t.Stop()
	var progs []*Program
	for {
		var now time.Time
		select {
		case <-w.life.Done():
			w.mu.Lock()
			w.running = false
			clear(w.progs)
			w.mu.Unlock()
			return
		case now = <-t.C:
		}
		w.mu.Lock()
		progs = progs[:0]
		for p := range w.progs {
			progs = append(progs, p)
		}
		w.mu.Unlock()
		for i, p := range progs {
			p.sweep(now, w.idleTimeout)
			// Disarm, then look again: a call that returned meanwhile either is seen here or
			// sees the program disarmed and arms it (put appends before it loads armed).
			p.armed.Store(false)
			if !p.quiet() {
				p.armed.Store(true)
				progs[i] = nil
			}
		}
		w.mu.Lock()
		for _, p := range progs {
			if p != nil && !p.armed.Load() {
				delete(w.progs, p)
			}
		}
		clear(progs) // hold no program past the sweep: an unreachable one must be collectable
		if len(w.progs) == 0 {
			w.running = false
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
	}
}
