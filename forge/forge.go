package forge

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/artifactforge/forge/classifier"
	"github.com/artifactforge/forge/learner"
	"github.com/artifactforge/forge/repair"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/artifactforge/forge/provider"
	"github.com/artifactforge/forge/registry"
	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/selector"
)

// Forge serves calls of role methods from one store. It is safe for concurrent use. Close it to
// flush buffered metrics and events.
type Forge struct {
	opts Options
	// envProvider is the provider $FORGE_PROVIDER names, for a forge opened without one.
	envProvider struct {
		once sync.Once
		p    provider.Provider
		err  error
	}
	store  registry.Backend
	pins   registry.PinLookup // store's, when it offers pins (the warm path's one lookup); else nil
	rec    registry.MetricsRecorder
	events *eventLog
	learn  *learner.Store // nil when learning is off
	calib  *calibration   // token estimate per model (assemble.go)
	now    func() time.Time
	// realClock: now is time.Now (Options.Now unset), so a call's event may take its time from
	// the reading that ended the call instead of a clock read of its own.
	realClock bool

	live      *liveHub // watch mode and live subscribers (watch.go)
	programs  *liveSet // the compiled programs kept ready (live.go)
	flight    singleflight.Group
	compiles  singleflight.Group // compiles of persisted code on a live-set miss
	placement Placement          // where contracts that name no sandbox run
	inputs    inputLedger        // the inputs each generation failed on (health.go)
	modelUse  *modelCalls        // each client's model calls within the window (modelcalls.go)

	// life is held for reading by every Call and Regenerate (and detached generations) while
	// they run, and for writing by Close: Close waits for them, and after it every call returns
	// an Outcome error instead of touching closed parts.
	life      sync.RWMutex
	closed    bool
	closeOnce sync.Once
	closeErr  error
	// bg ends when Close begins: generations detached from their callers end with it, so that
	// Close (and a process that got Ctrl-C) never waits for a generation nobody waits for.
	bg     context.Context
	stopBg context.CancelFunc

	mu        sync.RWMutex
	roles     map[string]*roleRuntime
	sandboxes map[string]sandbox.Sandbox
	decls     declSchemas // ToolSpecs' parsed declarations

	// samples buffers the inputs calls offer to their artifact's sample (sample.go); nil: off.
	samples *sampler
}

// compiled is an artifact snapshot and its compiled program, with the references that keep the
// program open (live.go): one for the live set while it is live, one per run in flight, one for
// the generation that verifies it until it is persisted. The last release closes the program.
type compiled struct {
	art  *registry.Artifact
	prog sandbox.Program
	sb   sandbox.Sandbox
	set  *liveSet // counts the close; nil for none
	// client is the client (WithClient) whose calls the program serves: the live set's key.
	client string

	refs atomic.Int64
	used atomic.Int64              // the live set's clock at the last hit
	idx  int                       // index in the live set's list, -1 when not in it (under the set's mu)
	warm atomic.Pointer[warmState] // the warm path's cache (live.go)
	// sizer is prog when it reports its memory (sandbox.Sizer) and can key a map: the live set
	// counts the memory of a program several methods share once.
	sizer sandbox.Sizer
}

// Open opens the store (a directory, or the URL of a registered backend: registry.OpenBackend)
// and starts the metrics recorder and the event log. Close closes the store.
func Open(opts Options) (*Forge, error) {
	if opts.Store == "" {
		d, err := DefaultStore()
		if err != nil {
			return nil, err
		}
		opts.Store = d
	}
	s, err := registry.OpenBackend(opts.Store, registry.OpenOptions{LocalDir: opts.LocalDir, ClientName: clientName(opts.ClientName), OnQuarantine: opts.OnQuarantine})
	if err != nil {
		return nil, err
	}
	f, err := open(s, opts)
	if err != nil {
		_ = s.Close()
		return nil, err
	}
	return f, nil
}

// clientName is the name a networked store's servers see for this process.
func clientName(name string) string {
	if name != "" {
		return name
	}
	return "forge"
}

// open builds the Forge on an opened store; on an error the caller closes the store.
func open(s registry.Backend, opts Options) (*Forge, error) {
	if opts.MaxProviderCalls <= 0 {
		opts.MaxProviderCalls = DefaultMaxProviderCalls
	}
	realClock := opts.Now == nil
	if realClock {
		opts.Now = time.Now
	}
	placement, err := ChooseDefault(opts.DefaultSandbox, sandbox.Backends())
	if err != nil {
		return nil, err
	}
	f := &Forge{opts: opts, store: s, now: opts.Now, realClock: realClock, placement: placement,
		roles: map[string]*roleRuntime{}, sandboxes: map[string]sandbox.Sandbox{}}
	f.pins, _ = s.(registry.PinLookup)
	f.programs = newLiveSet(liveBudget(opts.MaxLivePrograms, DefaultMaxLivePrograms), liveBudget(opts.MaxLiveBytes, DefaultLiveBytes()))
	f.live = newLiveHub()
	ledger, _ := s.(registry.ModelCallLedger)
	f.modelUse = newModelCalls(opts.ModelCalls, ledger)
	sink := opts.EventSink
	f.opts.EventSink = func(e Event) { // calls reach live subscribers (watch.go) and the caller's sink
		f.publishCall(f.live, e)
		if sink != nil {
			sink(e)
		}
	}
	if !opts.NoEvents {
		if f.events, err = openEventLog(filepath.Join(s.LocalDir(), "events"), eventLogMaxBytes, opts.EventsPerCall, opts.EventInterval); err != nil {
			return nil, err
		}
	}
	if err := f.openLayers(); err != nil {
		if f.events != nil {
			f.events.close() // its writer goroutine would outlive the failed Open
		}
		return nil, err
	}
	f.rec = s.NewRecorder(opts.FlushInterval)
	f.samples = newSampler(opts.SampleEvery, opts.SampleFlushInterval, f.flushSamples)
	f.bg, f.stopBg = context.WithCancel(context.Background())
	if opts.Watch {
		_ = f.Watch() // without fsnotify the revalidation poll is the fallback
	}
	return f, nil
}

// Store is the underlying store, for read-only inspection. Maintenance (doctor, quarantine), which
// the directory and fleet stores offer, is reached through registry.Maintainer (Forge.Maintainer).
func (f *Forge) Store() registry.Backend { return f.store }

// Maintainer is the store's maintenance interface, or an error naming the store when its backend
// offers none.
func (f *Forge) Maintainer() (registry.Maintainer, error) { return MaintainerOf(f.store) }

// MaintainerOf returns s's maintenance interface, or an error wrapping registry.ErrUnsupported
// that names the store and says what to do.
func MaintainerOf(s registry.Backend) (registry.Maintainer, error) {
	if m, ok := s.(registry.Maintainer); ok {
		return m, nil
	}
	return nil, unsupportedError{fmt.Sprintf("doctor and quarantine are not supported by %s: its backend offers no maintenance; run them on a store whose backend does (a directory store, --store DIR, or the nats:// fleet store)", s.Location())}
}

// unsupportedError is an operation a store backend does not offer; it wraps registry.ErrUnsupported.
type unsupportedError struct{ msg string }

func (e unsupportedError) Error() string { return e.msg }
func (e unsupportedError) Unwrap() error { return registry.ErrUnsupported }

// Close ends generations that no caller waits for, waits for calls in flight, flushes buffered metrics and events and releases the
// sandboxes. It is idempotent (a second Close returns the first one's result); a Call or
// Regenerate after Close returns an Outcome error of type "closed".
func (f *Forge) Close() error {
	f.closeOnce.Do(func() {
		f.stopBg() // detached generations end now; calls in flight get their failure
		f.life.Lock()
		f.closed = true
		f.life.Unlock()
		f.stopWatch()
		f.samples.close()
		lost := droppedErr(f.rec.Close(), f.store.Location())
		if f.events != nil {
			f.events.close()
		}
		f.programs.close() // no call is in flight: every live program closes now
		f.mu.Lock()
		defer f.mu.Unlock()
		errs := []error{lost}
		errs = append(errs, f.closeLayers()) // the reflector: lessons of this process go to disk
		for _, sb := range f.sandboxes {
			errs = append(errs, sb.Close())
		}
		f.sandboxes = map[string]sandbox.Sandbox{}
		errs = append(errs, f.store.Close()) // last: the layers and the recorder wrote into it
		f.closeErr = errors.Join(errs...)
	})
	return f.closeErr
}

// droppedErr is what the last flush of the metrics recorder could not write, as an error (nil if
// it wrote everything): a process that ends loses those counters, and says so.
func droppedErr(rep registry.FlushReport, store string) error {
	if len(rep.Dropped) == 0 {
		return nil
	}
	keys := slices.SortedFunc(maps.Keys(rep.Dropped), func(a, b registry.Key) int {
		return cmp.Or(cmp.Compare(a.Role, b.Role), cmp.Compare(a.Method, b.Method))
	})
	k := keys[0]
	return fmt.Errorf("forge: the call counters of %d artifact(s) could not be written to the store %s and are lost (first: %s.%s: %v)",
		len(keys), store, k.Role, k.Method, rep.Dropped[k])
}

// enter admits a call unless the Forge is closed or closing; leave must follow when it is true.
func (f *Forge) enter() bool {
	if !f.life.TryRLock() {
		return false // Close holds or waits for the lock
	}
	if f.closed {
		f.life.RUnlock()
		return false
	}
	return true
}

func (f *Forge) leave() { f.life.RUnlock() }

// closedFailure is the failure of a call made on a closed Forge.
func closedFailure(role, method string) *failure {
	return &failure{typ: TypeClosed, result: classifier.Classify(classifier.Failure{Kind: classifier.KindClosed}),
		msg: fmt.Sprintf("forge: %s.%s was called on a closed Forge; open a new one with forge.Open to make calls", role, method)}
}

// Health is the counters of a running Forge, for metrics and health checks (Stats, in
// stats.go, is what reuse bought, read from the event log).
type Health struct {
	// EventsDropped is how many event log lines were not written since Open because the queue
	// was full (only warm successes' own lines, in per-call mode) or the log was closed; the log's
	// "dropped" lines, each later line and events/dropped.jsonl carry the count too.
	EventsDropped int64 `json:"events_dropped"`
	// EventsDroppedByKind splits EventsDropped by line kind (forge.LineKind).
	EventsDroppedByKind map[string]int64 `json:"events_dropped_by_kind,omitempty"`
	// EventsLost is how many lines the log file refused (a full disk), counted the same way.
	EventsLost int64 `json:"events_lost"`
	// EventsWaited is how many lines (generations, failures, operator actions) found the queue
	// full and waited for room rather than be dropped.
	EventsWaited int64 `json:"events_waited"`
	// EventsAggregated is how many warm successes were written as aggregate lines.
	EventsAggregated int64 `json:"events_aggregated"`
	// EventsQueued is how many events wait to be written now.
	EventsQueued int `json:"events_queued"`
	// Closed reports whether Close was called.
	Closed bool `json:"closed"`
	// Live is the live set of compiled programs (see LiveStats).
	Live LiveStats `json:"live"`
}

// Health reports the Forge's counters now.
func (f *Forge) Health() Health {
	st := Health{Live: f.programs.stats()}
	if f.events != nil {
		f.events.health(&st)
	}
	if f.life.TryRLock() {
		st.Closed = f.closed
		f.life.RUnlock()
	} else {
		st.Closed = true // closing
	}
	return st
}

// Flush writes buffered metrics and queued events now.
func (f *Forge) Flush() {
	f.rec.Flush()
	if f.events != nil {
		f.events.sync()
	}
	f.flushLayers()
}

// AddRole validates and stores a role contract (replacing the contract of an existing role).
// The contract is checked first (Contract.Check under the forge's maxima): every problem is
// named and nothing is stored.
func (f *Forge) AddRole(c registry.Contract) error {
	if err := registry.Refusal(c.Role, c.Check(f.opts.Maxima)); err != nil {
		return err
	}
	_, err := f.store.PutRole(c.By(f.who(context.Background())), f.now())
	return err
}

// roleRuntime returns the derived runtime view of a role, rebuilt when its stored record changes.
func (f *Forge) roleRuntime(role string) (*roleRuntime, error) {
	rec, err := f.store.Role(role)
	if err != nil {
		return nil, err
	}
	f.mu.RLock()
	rt := f.roles[role]
	f.mu.RUnlock()
	if rt != nil && (rt.rec == rec || rt.rec.Fingerprint == rec.Fingerprint) {
		// Same contract: a usage update rewrote the registry, not the role.
		return rt, nil
	}
	rt, err = newRoleRuntime(rec, f.opts.Budget, f.placement)
	if err != nil {
		return nil, err
	}
	rt.limits = clampLimits(rt.limits, f.opts.Maxima) // health hook: the operator's maxima
	f.mu.Lock()
	f.roles[role] = rt
	f.mu.Unlock()
	return rt, nil
}

// sandbox returns the backend named name, built on first use.
func (f *Forge) sandbox(name string) (sandbox.Sandbox, error) {
	f.mu.RLock()
	sb := f.sandboxes[name]
	f.mu.RUnlock()
	if sb != nil {
		return sb, nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if sb = f.sandboxes[name]; sb != nil {
		return sb, nil
	}
	var err error
	if f.opts.Sandboxes != nil {
		sb, err = f.opts.Sandboxes(name)
	} else {
		sb, err = newSandbox(name, sandbox.Config{CacheDir: cacheDir(f.store.LocalDir()), RecordDir: filepath.Join(f.store.LocalDir(), "sums"),
			PoolSize: f.opts.SandboxPoolSize, IdleTimeout: f.opts.SandboxIdleTimeout, MaxWorkers: f.opts.SandboxMaxWorkers})
	}
	if err != nil {
		return nil, err
	}
	f.sandboxes[name] = sb
	return sb, nil
}

// ErrUnknownSandbox is returned for a sandbox name no backend answers to.
var ErrUnknownSandbox = errors.New("unknown sandbox")

// DefaultSandbox builds the registered backend name ("yaegi", "wasm") for a store: the wasm
// backend caches its built modules and compiled code under the store's cache/. An empty name is
// the safe default (see ChooseDefault).
func DefaultSandbox(name, storeRoot string) (sandbox.Sandbox, error) {
	return newSandbox(name, sandbox.Config{CacheDir: cacheDir(storeRoot), RecordDir: filepath.Join(storeRoot, "sums")})
}

// newSandbox builds the registered backend name (the safe default if empty) with cfg.
func newSandbox(name string, cfg sandbox.Config) (sandbox.Sandbox, error) {
	if name == "" {
		p, err := ChooseDefault("", sandbox.Backends())
		if err != nil {
			return nil, err
		}
		name = p.Backend
	}
	b, ok := sandbox.LookupBackend(name)
	if !ok {
		return nil, fmt.Errorf("forge: %w %q: use one of %s", ErrUnknownSandbox, name, sandbox.BackendNames())
	}
	if err := b.Usable(); err != nil {
		return nil, fmt.Errorf("forge: %w", err)
	}
	return b.New(cfg)
}

// MarkRegenerate makes the next call of role.method regenerate its code (`forge regen --next-call`).
// Its event line names Options.ClientName (MarkRegenerateContext names the context's client).
func (f *Forge) MarkRegenerate(role, method string) error {
	return f.MarkRegenerateContext(context.Background(), role, method)
}

// Bless pins role.method's current generation: it is always executed and never replaced
// automatically. resetMetrics starts its counters afresh. (BlessContext names the client.)
func (f *Forge) Bless(role, method string, resetMetrics bool) error {
	return f.BlessContext(context.Background(), role, method, resetMetrics)
}

// Quarantine refuses role.method's artifact until an operator lifts the quarantine
// (LiftQuarantine), rolls it back or regenerates it. (QuarantineContext names the client.)
func (f *Forge) Quarantine(role, method string) error {
	return f.QuarantineContext(context.Background(), role, method)
}

// Rollback makes generation gen (0: the one before the current) current again, from the kept
// history, without the code generator. (RollbackContext names the client.)
func (f *Forge) Rollback(role, method string, gen int) (*registry.Artifact, error) {
	return f.RollbackContext(context.Background(), role, method, gen)
}

// Archive marks role.method archived (reversible: a call or Rollback revives it).
// (ArchiveContext names the client.)
func (f *Forge) Archive(role, method string) error {
	return f.ArchiveContext(context.Background(), role, method)
}

// update is a locked read-modify-write of an existing artifact.
func (f *Forge) update(role, method string, fn func(a *registry.Artifact) error) (*registry.Artifact, error) {
	a, err := f.store.Update(role, method, func(a *registry.Artifact, exists bool) error {
		if !exists {
			return fmt.Errorf("forge: %s.%s: %w; it is created by the first `forge call %s %s`", role, method, registry.ErrNotFound, role, method)
		}
		return fn(a)
	})
	if err != nil {
		return nil, err
	}
	// The live set is keyed by code checksum, so a changed code recompiles on use; dropping the
	// old program now releases its memory without waiting for that call.
	f.programs.drop(registry.Key{Role: role, Method: method}, a.CodeChecksum)
	return a, nil
}

// providerOrErr returns the configured provider or the error that says how to configure one:
// Options.Provider, else the one $FORGE_PROVIDER names (ProviderFromEnv, built on the first
// generation, so that a forge that only runs persisted artifacts never needs one).
func (f *Forge) providerOrErr() (provider.Provider, error) {
	if f.opts.Provider != nil {
		return f.opts.Provider, nil
	}
	f.envProvider.once.Do(func() {
		f.envProvider.p, f.envProvider.err = ProviderFromEnv("", os.Getenv)
	})
	if f.envProvider.p != nil || f.envProvider.err != nil {
		return f.envProvider.p, f.envProvider.err
	}
	return provider.Open("", func(string) string { return "" })
}

// Regenerate writes role.method's code again from its contract now, with the provider
// (`forge regen`), verifies it and makes it current; the old code stays in the history. The
// Outcome has no value: no call args were given.
func (f *Forge) Regenerate(ctx context.Context, role, method string) Outcome {
	return f.RegenerateWith(ctx, role, method, RegenOptions{})
}

// RegenOptions are an operator's choices for a regeneration.
type RegenOptions struct {
	// AcceptChanges promotes new code even when it changes answers of the sample of real calls
	// (safe regeneration, shadow.go): the operator has seen the differences and wants them.
	AcceptChanges bool
}

// RegenerateWith is Regenerate with the operator's options.
func (f *Forge) RegenerateWith(ctx context.Context, role, method string, opts RegenOptions) Outcome {
	c := &call{f: f, role: role, method: method, start: time.Now(), operator: true, acceptChanges: opts.AcceptChanges}
	c.ev.Role, c.ev.Method, c.ev.CallID = role, method, newID()
	c.ev.TraceID = c.ev.CallID
	c.ev.Action, c.ev.Reason = OpRegenerate, reasonOperator
	c.ev.Who = f.who(ctx)
	c.meta.Decision = "regenerate:operator"
	if !f.enter() {
		return Outcome{Err: closedFailure(role, method).toError(), Meta: c.meta}
	}
	defer f.leave()
	rt, err := f.roleRuntime(role)
	if err != nil {
		return c.finish(c.fail(roleFailure(role, err)))
	}
	c.rt = rt
	base, err := f.store.Load(role, method)
	if err != nil && !errors.Is(err, registry.ErrNotFound) && !errors.Is(err, registry.ErrCorrupt) {
		return c.finish(c.fail(classifyErr(err, false)))
	}
	var replaced *repair.Attempt
	if base != nil {
		replaced = &repair.Attempt{Code: base.Code, Error: "an operator asked for new code"}
		c.ev.ArtifactGenBefore, c.ev.LifecycleBefore = base.Generation, string(base.Lifecycle)
	}
	o := c.produce(ctx, base, repair.ByOperator(repair.VerbRegen, ""), replaced)
	if c.art != nil {
		c.ev.Lifecycle = string(c.art.Lifecycle)
		if o.OK && c.meta.Unchanged && !c.meta.Joined && c.art.Lifecycle == registry.Quarantined {
			// The model wrote the quarantined code again: the quarantine stands, so the operator's
			// regeneration did not do what it was asked. A refusal (the CLI exits 1; HTTP and MCP
			// answer ok false), with the ways out.
			o = c.fail(&failure{typ: TypeRefused, result: classifier.Result{Class: classifier.Extrinsic, Rule: classifier.Rule(selector.ReasonQuarantined)},
				msg: fmt.Sprintf("%s.%s is still quarantined: the model wrote the quarantined code again (generation %d kept, %d provider call(s)); "+
					"run `forge edit %s %s` to fix the code by hand, `forge rollback %s %s` if it has an earlier generation, "+
					"`forge quarantine lift %s %s` if the quarantine was a mistake (the gate checks the code again), or change the role's contract and regenerate",
					role, method, c.art.Generation, c.meta.ProviderCalls, role, method, role, method, role, method)})
		}
	}
	return c.finish(o)
}
