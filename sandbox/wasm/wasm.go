package wasm

import (
	"bytes"
	"context"
	cryptorand "crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"
	"golang.org/x/sync/singleflight"

	"github.com/artifactforge/forge/internal/tailbuf"
	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/internal/guestgen"
	"github.com/artifactforge/forge/sandbox/internal/reftab"
)

// Options configure a wasm Sandbox.
type Options struct {
	// CacheDir holds built modules (modules/) and wazero's compilation cache (compiled/). The forge
	// passes its store's cache/ directory; default os.UserCacheDir()/forge.
	CacheDir string
	// RecordDir holds the SHA-256 of every file this package keeps in CacheDir, so that a module or
	// compiled code swapped, planted or damaged in the cache is never used (records.go). It belongs
	// outside CacheDir, where the cache's writers cannot change it: the forge passes its store's
	// sums/. Empty: CacheDir/sums (then the records are only as safe as the cache).
	RecordDir string
	// GoBin is the go command that builds modules (default $FORGE_GO, then go on PATH, then GOROOT).
	GoBin string
	// PoolSize bounds the live instances per program and memory cap (default 2 x GOMAXPROCS);
	// calls beyond it wait for a free instance.
	PoolSize int
	// IdleTimeout is how long an instance may sit idle before it is closed; each pool keeps one
	// warm instance however long it idles (default DefaultIdleTimeout, negative: never trim).
	IdleTimeout time.Duration
}

// DefaultIdleTimeout is how long an idle instance beyond a pool's first is kept (Options.IdleTimeout).
const DefaultIdleTimeout = 30 * time.Second

// compiledCodeFactor estimates a module's compiled machine code from its size: wazero's
// optimizing compiler emits about 4 bytes of code per byte of a Go-built module (13.4 MB for a
// 3.4 MB module), and that code is resident while the module is live.
const compiledCodeFactor = 4

// Sandbox is the wasm backend: each artifact is built into a wasip1 reactor module with the Go
// toolchain, compiled by wazero, and run in pooled instances with a memory cap, a deadline that
// always stops the guest, no filesystem, environment or sockets, and the host API as imports.
type Sandbox struct {
	opts    Options
	builder *builder
	code    *codeCache // compiled code kept across processes, verified (codecache.go)

	programs reftab.Table[*Program] // by reftab.ProgramKey

	mu      sync.Mutex
	engines map[engineKey]*engine
	closed  atomic.Bool
	reruns  atomic.Int64 // tests rerun compiled after hitting a limit interpreted
	// compileSlots bounds the modules wazero compiles at once (each compile of a module at the
	// bounds of checkModule peaks at ~125 MiB of host memory; see RATIONALE.md).
	compileSlots chan struct{}

	counts    liveCounts
	stopTrim  chan struct{}
	trimmings atomic.Int64 // idle instances closed by the trimmer
}

// liveCounts are the sandbox's live compiled modules and instances (a debug gauge: Live).
type liveCounts struct {
	modules, instances atomic.Int64
}

// LiveCounts is what a wasm sandbox holds now.
type LiveCounts struct {
	// Programs is the call programs compiled and not yet closed; Modules the compiled modules
	// (one per program and memory cap, plus test modules while tests run); Instances the module
	// instances, busy or idle.
	Programs, Modules, Instances int
	// Trimmed counts the idle instances closed because they idled longer than IdleTimeout.
	Trimmed int64
}

// Live reports what the sandbox holds now: every Close of a program gives back its modules and
// instances, and idle pools shrink to one instance.
func (s *Sandbox) Live() LiveCounts {
	return LiveCounts{Programs: s.programs.Len(), Modules: int(s.counts.modules.Load()), Instances: int(s.counts.instances.Load()), Trimmed: s.trimmings.Load()}
}

var (
	_ sandbox.Sandbox = (*Sandbox)(nil)
	_ sandbox.Tester  = (*Sandbox)(nil)
	_ sandbox.Warmer  = (*Sandbox)(nil)
)

// New returns a wasm sandbox. Nothing is built or compiled until Compile.
func New(opts Options) (*Sandbox, error) {
	if opts.PoolSize <= 0 {
		opts.PoolSize = 2 * runtime.GOMAXPROCS(0)
	}
	if opts.CacheDir == "" {
		d, err := os.UserCacheDir()
		if err != nil {
			return nil, fmt.Errorf("wasm: no cache dir: %w (set Options.CacheDir)", err)
		}
		opts.CacheDir = filepath.Join(d, "forge")
	}
	// No link below the directory that holds the cache (the store, for the forge's cache/) is
	// followed: a linked cache/ or cache/wasm would lead the writes and prunes elsewhere.
	root := filepath.Dir(filepath.Clean(opts.CacheDir))
	if opts.RecordDir == "" {
		opts.RecordDir = filepath.Join(opts.CacheDir, "sums")
	}
	opts.CacheDir = filepath.Join(opts.CacheDir, "wasm")
	rec := records{Root: recordRoot(opts.RecordDir), Dir: filepath.Join(opts.RecordDir, "wasm")}
	b := newBuilder(opts.CacheDir, root, rec, opts.GoBin)
	cache, err := newCodeCache(opts.CacheDir, root, rec, func() { b.rejected.Add(1) })
	if err != nil {
		return nil, err
	}
	if opts.IdleTimeout == 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	s := &Sandbox{
		opts:         opts,
		builder:      b,
		code:         cache,
		engines:      map[engineKey]*engine{},
		compileSlots: make(chan struct{}, max(2, runtime.GOMAXPROCS(0))),
		stopTrim:     make(chan struct{}),
	}
	if opts.IdleTimeout > 0 {
		go s.trimLoop(opts.IdleTimeout)
	}
	return s, nil
}

// trimLoop closes, every interval, the instances that no call used since the previous round,
// keeping one warm instance per pool.
func (s *Sandbox) trimLoop(interval time.Duration) {
	guestgen.RunEvery(interval, s.stopTrim, func(time.Time) { s.trim() })
}

// trim is one round of trimLoop.
func (s *Sandbox) trim() {
	for _, p := range s.programs.Values() {
		p.mu.Lock()
		pools := make([]*pool, 0, len(p.pools))
		for _, pl := range p.pools {
			pools = append(pools, pl)
		}
		p.mu.Unlock()
		for _, pl := range pools {
			s.trimmings.Add(int64(pl.trim()))
		}
	}
}

// Name is the backend's name in contracts and the corpus ("wasm").
func (s *Sandbox) Name() string { return "wasm" }

// Close closes every runtime (and with them all instances and compiled modules).
func (s *Sandbox) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	close(s.stopTrim)
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, e := range s.engines {
		errs = append(errs, e.rt.Close(context.Background()))
	}
	s.engines = map[engineKey]*engine{}
	s.programs.Clear()
	errs = append(errs, s.code.close())
	return errors.Join(errs...)
}

// engine is one wazero runtime: the memory cap is a runtime setting, so each cap gets its own.
type engine struct {
	rt    wazero.Runtime
	pages uint32
	// compiles shares one CompileModule per module (by content hash). wazero v1.12.0 publishes a
	// module loaded from the on-disk cache to other callers of the same module before it is
	// complete, so concurrent compiles of one module could instantiate a half-built one (an
	// index-out-of-range panic inside wazevo; see TestConcurrentCompileSharesBuild and
	// RATIONALE.md). Different modules compile in parallel: wazero keys that table by module.
	compiles singleflight.Group

	live *liveCounts // nil for engines made outside a Sandbox (tests)
	code *codeCache  // the verified compiled-code cache behind the runtime's, or nil
	mu   sync.Mutex
	mods map[string]*modRef // compiled modules by hash, shared by the pools that use them
}

// modRef is a compiled module and how many pools use it: the last release closes it.
type modRef struct {
	cm   wazero.CompiledModule
	refs int
}

// CompileTimeout bounds wazero's compilation of one module (shared by every caller that needs
// it). Modules within the bounds of checkModule compile in a few seconds even on a loaded
// machine; one that does not is refused as the code's compile error.
const CompileTimeout = 30 * time.Second

// compile returns the compiled module of bin (named by its content hash) with a reference the
// caller gives back with release: the module is compiled once for all concurrent callers and
// shared while any of them holds it. The compile runs under its own CompileTimeout, detached
// from any one caller; a caller whose ctx ends stops waiting (the compile goes on for the others
// and for wazero's caches).
func (e *engine) compile(ctx context.Context, bin []byte, hash string, slots chan struct{}) (wazero.CompiledModule, error) {
	for {
		e.mu.Lock()
		if m := e.mods[hash]; m != nil {
			m.refs++
			e.mu.Unlock()
			return m.cm, nil
		}
		e.mu.Unlock()
		if err := e.compileShared(ctx, bin, hash, slots); err != nil {
			return nil, err
		}
		// The module is registered now; take a reference (again, in the rare case that its
		// holders released it between the compile and here).
	}
}

// release gives back a reference compile returned; the last one closes the compiled module.
func (e *engine) release(hash string) {
	e.mu.Lock()
	m := e.mods[hash]
	if m == nil {
		e.mu.Unlock()
		return
	}
	m.refs--
	if m.refs > 0 {
		e.mu.Unlock()
		return
	}
	delete(e.mods, hash)
	e.mu.Unlock()
	m.cm.Close(context.Background())
	if e.live != nil {
		e.live.modules.Add(-1)
	}
}

// compileShared compiles bin once for all concurrent callers and registers the result in e.mods
// (with no reference: callers take theirs in compile).
func (e *engine) compileShared(ctx context.Context, bin []byte, hash string, slots chan struct{}) error {
	ch := e.compiles.DoChan(hash, func() (any, error) {
		select {
		case slots <- struct{}{}:
			defer func() { <-slots }()
		case <-time.After(CompileTimeout):
			return nil, &sandbox.Error{Kind: sandbox.KindCapacity,
				Message: fmt.Sprintf("no compile slot within %v (%d modules compiling): retry later", CompileTimeout, cap(slots))}
		}
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), CompileTimeout)
		defer cancel()
		if c := e.code; c != nil {
			before := c.snapshot()
			staged := c.stageFor(hash)
			defer c.after(hash, staged, before)
		}
		cm, err := e.rt.CompileModule(cctx, bin)
		switch {
		case err != nil && cctx.Err() != nil:
			return nil, &sandbox.Error{Kind: sandbox.KindCompile, Err: err,
				Message: fmt.Sprintf("compiling the WebAssembly module took longer than %v", CompileTimeout),
				Hint:    "make the code smaller: fewer and shorter functions, loops and tables instead of unrolled code"}
		case err != nil:
			// The module is the code's, built by the toolchain: one wazero refuses is the code's
			// compile error too (an internal error would let the gate pass it undecided).
			return nil, &sandbox.Error{Kind: sandbox.KindCompile, Message: "wasm: compile module: " + err.Error(), Err: err}
		}
		e.mu.Lock()
		if e.mods == nil {
			e.mods = map[string]*modRef{}
		}
		if e.mods[hash] == nil {
			e.mods[hash] = &modRef{cm: cm}
			cm = nil
		}
		e.mu.Unlock()
		if cm != nil {
			cm.Close(context.Background()) // cannot happen: flights of one hash do not overlap
		} else if e.live != nil {
			e.live.modules.Add(1)
		}
		return nil, nil
	})
	select {
	case r := <-ch:
		return r.Err
	case <-ctx.Done():
		return &sandbox.Error{Kind: sandbox.KindCapacity, Message: "deadline exceeded waiting for the module to compile: retry (the compile goes on)", Err: ctx.Err()}
	}
}

func stackFor(lim sandbox.Limits) uint64 { return guestgen.StackFor(lim) }

const maxPages = 65536 // 4 GiB, the wasm32 limit

func pagesFor(memoryBytes int64) uint32 {
	p := (memoryBytes + 65535) / 65536
	switch {
	case p < 64: // the Go runtime needs a few MiB to start
		return 64
	case p > maxPages:
		return maxPages
	}
	return uint32(p)
}

// engineKind says how a runtime runs its modules.
type engineKind uint8

const (
	// engCall compiles to machine code, cached on disk: artifact modules, compiled once per
	// generation and called for as long as it lives.
	engCall engineKind = iota
	// engTestInterp is wazero's interpreter: a test module (artifact + testing + testify, about
	// 4.5 MB) is used once, and the interpreter gets it running about 6x sooner than the compiler
	// does (0.5 s against 3.3 s), which outweighs its slower execution for acceptance tests.
	engTestInterp
	// engTestCompiled compiles test modules in memory only; it reruns the tests that hit their
	// deadline or the call-depth cap in the interpreter, so that no verdict depends on the
	// interpreter's speed or its call-stack ceiling (2,000 wasm frames).
	engTestCompiled
)

func (k engineKind) test() bool { return k != engCall }

type engineKey struct {
	pages uint32
	kind  engineKind
}

// engine returns the runtime for a memory cap and kind.
func (s *Sandbox) engine(ctx context.Context, pages uint32, kind engineKind) (*engine, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return nil, sandbox.Errorf(sandbox.KindInternal, "wasm: sandbox closed")
	}
	key := engineKey{pages, kind}
	if e := s.engines[key]; e != nil {
		return e, nil
	}
	var cache wazero.CompilationCache
	if kind == engCall {
		cache = s.code.wz
	}
	e, err := newEngine(ctx, cache, pages, false, kind == engTestInterp)
	if err != nil {
		return nil, err
	}
	if kind == engCall {
		e.code = s.code
	}
	e.live = &s.counts
	s.engines[key] = e
	return e, nil
}

// newEngine starts a runtime with the WASI and forge host modules. closeOnDone selects wazero's
// own context checks (WithCloseOnContextDone); the sandbox leaves it off because its instrumented
// tick stops runaway code much more cheaply (see instrument.go and RATIONALE.md). interp selects
// wazero's interpreter instead of its compiler.
func newEngine(ctx context.Context, cache wazero.CompilationCache, pages uint32, closeOnDone, interp bool) (*engine, error) {
	cfg := wazero.NewRuntimeConfig()
	if interp {
		cfg = wazero.NewRuntimeConfigInterpreter()
	}
	cfg = cfg.WithMemoryLimitPages(pages).
		WithMemoryCapacityFromMax(true).
		WithCloseOnContextDone(closeOnDone)
	if cache != nil {
		cfg = cfg.WithCompilationCache(cache)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, cfg)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		rt.Close(ctx)
		return nil, &sandbox.Error{Kind: sandbox.KindInternal, Message: "wasm: wasi: " + err.Error(), Err: err}
	}
	if err := instantiateHostModule(ctx, rt); err != nil {
		rt.Close(ctx)
		return nil, &sandbox.Error{Kind: sandbox.KindInternal, Message: "wasm: host module: " + err.Error(), Err: err}
	}
	return &engine{rt: rt, pages: pages}, nil
}

// Program is a built artifact module with its instance pools (one per memory cap).
type Program struct {
	src  sandbox.Source
	sum  string
	sig  sandbox.Signature
	bin  []byte
	hash string // sha256 of bin, set by pool
	sb   *Sandbox
	kind engineKind

	mu    sync.Mutex
	pools map[uint32]*pool
	// ready is a copy of pools, replaced (under mu) whenever a pool is added or the program
	// closes: every warm call looks its pool up here without taking mu, which a loaded server's
	// concurrent calls of one method otherwise queued on (a preempted holder held all of them).
	ready atomic.Pointer[map[uint32]*pool]

	key    string      // in sb.programs, which counts the Compile results not yet closed
	closed atomic.Bool // set by the last Close; read by Run without a lock
	bytes  atomic.Int64
}

var _ sandbox.Sizer = (*Program)(nil)

// LiveBytes estimates the memory the program holds: its module's compiled code (per memory cap)
// and its instances' linear memories as of their last call (see sandbox.Sizer).
func (p *Program) LiveBytes() int64 { return p.bytes.Load() + int64(len(p.bin)) }

// Close releases this Compile result; the last Close of a module's program closes its idle
// instances and compiled code and forgets it (see sandbox.Program).
func (p *Program) Close() error {
	if !p.sb.programs.Release(p.key, p) || p.closed.Swap(true) {
		return nil
	}
	p.mu.Lock()
	pools := p.pools
	p.pools = map[uint32]*pool{}
	p.ready.Store(nil)
	p.mu.Unlock()
	var errs []error
	for _, pl := range pools {
		errs = append(errs, pl.close())
	}
	return errors.Join(errs...)
}

// close closes the pool's idle instances and gives back its compiled module. No instance is in
// use.
func (pl *pool) close() error {
	pl.trimMu.Lock()
	defer pl.trimMu.Unlock()
	if pl.closed {
		return nil
	}
	pl.closed = true
	for _, ch := range []chan *instance{pl.idle, pl.spare} {
		for {
			select {
			case inst := <-ch:
				inst.close()
				continue
			default:
			}
			break
		}
	}
	pl.acct.Add(-pl.codeBytes)
	pl.eng.release(pl.hash)
	return nil
}

// trim closes the idle instances that no call used since the previous trim, keeping at least one
// idle instance, and returns how many it closed.
func (pl *pool) trim() int {
	pl.trimMu.Lock()
	defer pl.trimMu.Unlock()
	if pl.closed {
		return 0
	}
	closed := 0
	warm := false
	for _, ch := range []chan *instance{pl.idle, pl.spare} {
		var taken []*instance
	drain:
		for {
			select {
			case inst := <-ch:
				taken = append(taken, inst)
			default:
				break drain
			}
		}
		for _, inst := range taken {
			used := inst.uses != inst.seen
			inst.seen = inst.uses
			if used || (!warm && ch == pl.idle) {
				warm = true
				select {
				case ch <- inst:
					continue
				default: // spares made meanwhile filled the channel: this one goes
				}
			}
			inst.close()
			closed++
			if ch == pl.idle {
				<-pl.sem
			}
		}
	}
	return closed
}

// Signature returns the function's signature.
func (p *Program) Signature() sandbox.Signature { return p.sig }

// Checksum returns the sha256 of the original code.
func (p *Program) Checksum() string { return p.sum }

// Source returns the original source.
func (p *Program) Source() sandbox.Source { return p.src }

// ModuleSize is the size of the built module in bytes (for reports).
func (p *Program) ModuleSize() int { return len(p.bin) }

func gateCode(code string, test bool, companion map[string]string) (string, *ast.File, error) {
	return guestgen.GateCode(code, test, companion)
}

// Compile gates src, builds its module (cached by code checksum; concurrent builds of one module
// are shared), compiles it with wazero (cached on disk) and starts a first instance, so that
// compile errors and panicking initializers surface here.
func (s *Sandbox) Compile(ctx context.Context, src sandbox.Source) (sandbox.Program, error) {
	p, err := s.compile(ctx, src)
	if err != nil {
		return nil, sandbox.CapError(err) // go build output and initializer panics can be long
	}
	return p, nil
}

func (s *Sandbox) compile(ctx context.Context, src sandbox.Source) (*Program, error) {
	// Programs are shared by code, but never across clients: each client's program has pools of
	// its own (the compiled module is still shared, by hash, see engine.compile).
	return reftab.Compile(&s.programs, Name, s.closed.Load(), src, func(key string) (*Program, error) { return s.newProgram(ctx, src, key) })
}

// newProgram gates and builds src, compiles its module and starts a first instance.
func (s *Sandbox) newProgram(ctx context.Context, src sandbox.Source, key string) (*Program, error) {
	code, sig, err := guestgen.GateCall(src)
	if err != nil {
		return nil, err
	}
	bin, err := s.builder.build(ctx, callGuest(code, sig), true)
	if err != nil {
		return nil, err
	}
	p := &Program{src: src, sum: src.Checksum(), sig: sig, bin: bin, sb: s, pools: map[uint32]*pool{}, key: key}
	pl, err := p.pool(ctx, pagesFor(sandbox.DefaultMemoryBytes))
	if err != nil {
		return nil, err
	}
	inst, _, err := pl.get(ctx)
	if err != nil {
		p.Close()
		return nil, err
	}
	pl.put(inst, true)
	return p, nil
}

func (p *Program) pool(ctx context.Context, pages uint32) (*pool, error) {
	if m := p.ready.Load(); m != nil {
		if pl := (*m)[pages]; pl != nil {
			return pl, nil
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if pl := p.pools[pages]; pl != nil {
		return pl, nil
	}
	if p.closed.Load() {
		// A call that passed Run's check as Close ran: a pool made now would never be closed.
		return nil, sandbox.Errorf(sandbox.KindInternal, "%s: run of a closed program (a forge bug: programs are closed only when no call uses them)", Name)
	}
	eng, err := p.sb.engine(ctx, pages, p.kind)
	if err != nil {
		return nil, err
	}
	if err := checkModule(p.bin); err != nil {
		return nil, err
	}
	if p.hash == "" {
		h := sha256.Sum256(p.bin)
		p.hash = hex.EncodeToString(h[:])
	}
	// The compiled code is shared by every program of the module (other clients' programs, see
	// Source.Client): only the pool that compiles it counts it in its LiveBytes, so that N
	// clients of one method do not count its code N times against the live set's budget.
	eng.mu.Lock()
	shared := eng.mods[p.hash] != nil
	eng.mu.Unlock()
	cm, err := eng.compile(ctx, p.bin, p.hash, p.sb.compileSlots)
	if err != nil {
		return nil, err
	}
	codeBytes := compiledCodeFactor * int64(len(p.bin))
	if shared {
		codeBytes = 0
	}
	n := p.sb.opts.PoolSize
	pl := &pool{eng: eng, cm: cm, hash: p.hash, acct: &p.bytes, codeBytes: codeBytes,
		idle: make(chan *instance, n), spare: make(chan *instance, sandbox.DefaultMaxCallDepth), sem: make(chan struct{}, n), test: p.kind.test()}
	pl.acct.Add(pl.codeBytes)
	p.pools[pages] = pl
	ready := maps.Clone(p.pools)
	p.ready.Store(&ready)
	return pl, nil
}

// Run calls the program's function with in.Args in an instance of its module.
func (s *Sandbox) Run(ctx context.Context, prog sandbox.Program, in sandbox.Input) (sandbox.Output, error) {
	p, ok := prog.(*Program)
	args, err := guestgen.StartCall(Name, prog, ok && p.sb == s, ok && p.closed.Load(), &in)
	if err != nil {
		return sandbox.Output{}, err
	}
	start := time.Now()
	pl, err := p.pool(ctx, pagesFor(in.Limits.MemoryBytes))
	if err != nil {
		return sandbox.Output{}, err
	}
	cctx := withCallDeadline(ctx, time.Now().Add(in.Limits.Timeout))
	defer cctx.release()
	ctx = cctx
	fresh := in.Limits.Instance == sandbox.InstancePerCall
	var inst *instance
	var waited time.Duration
	if fresh {
		inst, waited, err = pl.getFresh(ctx)
	} else {
		inst, waited, err = pl.get(ctx)
	}
	if err != nil {
		return sandbox.Output{}, sandbox.CapError(err) // a new instance's initializer may have failed at length
	}
	host := sandbox.NewHost(ctx, in)
	value, rerr := p.callLean(ctx, inst, host, args, in.Limits)
	var out sandbox.Output
	out.Value = value
	rerr = host.Finish(&out, rerr)
	if rerr != nil && waited > in.Limits.Timeout/10 {
		rerr = waitedTooLong(rerr, waited, in.Limits.Timeout)
	}
	out.Duration = time.Since(start)
	pl.put(inst, inst.healthy() && !fresh)
	if rerr != nil {
		return sandbox.Output{Logs: out.Logs, Duration: out.Duration, HostCalls: out.HostCalls, UpstreamRead: out.UpstreamRead}, rerr
	}
	return out, nil
}

// pool holds idle instances of one compiled module; sem bounds the live ones.
type pool struct {
	eng  *engine
	cm   wazero.CompiledModule
	idle chan *instance
	sem  chan struct{}
	// spare holds idle instances made beyond the pool for delegated calls (they hold no token).
	spare chan *instance
	test  bool

	hash      string        // the module's, for eng.release
	acct      *atomic.Int64 // the program's LiveBytes
	codeBytes int64         // the compiled code's estimated size, in acct while the pool lives
	trimMu    sync.Mutex    // trim and close
	closed    bool
}

// get returns an idle instance or starts one, waiting while PoolSize instances are busy; waited
// is how long it waited for one (not counting the start of a new one). Waiting for capacity is
// never the code's fault: a wait that outlasts the deadline is KindCapacity, not KindDeadline.
func (pl *pool) get(ctx context.Context) (inst *instance, waited time.Duration, err error) {
	select {
	case inst := <-pl.idle:
		return inst, 0, nil
	default:
	}
	if sandbox.CallDepth(ctx) > 0 {
		// A delegated call: its ancestors may hold every pooled instance while they wait for
		// it, so it never waits for one. It takes a free slot, or an instance beyond the pool
		// size (at most one per level of the chain, so bounded by Limits.MaxCallDepth).
		select {
		case inst := <-pl.spare:
			return inst, 0, nil
		case pl.sem <- struct{}{}:
			inst, err := newInstance(ctx, pl.eng, pl.cm, pl.test)
			if err != nil {
				<-pl.sem
				return nil, 0, err
			}
			return pl.adopt(inst), 0, nil
		default:
		}
		inst, err := newInstance(ctx, pl.eng, pl.cm, pl.test)
		if err != nil {
			return nil, 0, err
		}
		inst.extra = true
		return pl.adopt(inst), 0, nil
	}
	select {
	case pl.sem <- struct{}{}:
	default:
		start := time.Now()
		select {
		case inst := <-pl.idle:
			return inst, time.Since(start), nil
		case pl.sem <- struct{}{}:
			waited = time.Since(start)
		case <-ctx.Done():
			return nil, time.Since(start), &sandbox.Error{Kind: sandbox.KindCapacity, Err: ctx.Err(),
				Message: fmt.Sprintf("no free wasm instance within the deadline (%d busy with other calls of this artifact): retry later, or raise the pool size", cap(pl.sem))}
		}
	}
	inst, err = newInstance(ctx, pl.eng, pl.cm, pl.test)
	if err != nil {
		<-pl.sem
		return nil, waited, err
	}
	return pl.adopt(inst), waited, nil
}

// getFresh is get for a per-call program (sandbox.InstancePerCall): an instance no call has run
// in. An idle one that served a call gives its slot to a new one and is closed.
func (pl *pool) getFresh(ctx context.Context) (*instance, time.Duration, error) {
	inst, waited, err := pl.get(ctx)
	if err != nil || inst.uses == 0 {
		return inst, waited, err
	}
	fresh, err := newInstance(ctx, pl.eng, pl.cm, pl.test)
	if err != nil {
		pl.put(inst, false) // frees its slot
		return nil, waited, err
	}
	fresh.extra = inst.extra // the slot (or none) passes to the new instance
	go inst.close()
	return pl.adopt(fresh), waited, nil
}

// waitedTooLong turns a deadline into KindCapacity when the call spent more than a tenth of its
// time limit waiting for an instance: the code did not get the time it is judged by, so the
// deadline says nothing about it. A deadline during external work keeps its own classification.
func waitedTooLong(err error, waited, limit time.Duration) error {
	e := sandbox.AsError(err)
	if e.Kind != sandbox.KindDeadline || e.HostCallInFlight {
		return err
	}
	c := *e
	c.Kind = sandbox.KindCapacity
	c.Message = fmt.Sprintf("deadline exceeded after waiting %v of the %v limit for a free wasm instance: the code ran only %v; retry later, or raise the pool size",
		waited.Round(time.Millisecond), limit, (limit - waited).Round(time.Millisecond))
	return &c
}

// put returns inst to the pool, or closes it when it trapped, exited or was stopped: its Go
// runtime may be in any state.
func (pl *pool) put(inst *instance, ok bool) {
	inst.host = nil
	inst.uses++
	if ok && inst.acct != nil {
		if sz := int64(inst.mem.Size()); sz != inst.size {
			inst.acct.Add(sz - inst.size)
			inst.size = sz
		}
	}
	if inst.extra && ok {
		// An instance made beyond the pool joins it if a slot is free; else it waits idle for
		// the next deep chain if there is room (sandbox.DefaultMaxCallDepth of them), or closes.
		select {
		case pl.sem <- struct{}{}:
			inst.extra = false
		default:
			select {
			case pl.spare <- inst:
			default:
				inst.close()
			}
			return
		}
	}
	if !ok {
		// Unmapping a large linear memory takes milliseconds (43 ms measured for 128 MiB touched
		// on a loaded machine): the caller does not wait for it, and the slot is freed after it,
		// so live instances never exceed PoolSize (an instance made beyond the pool holds none).
		go func() {
			inst.close()
			if !inst.extra {
				<-pl.sem
			}
		}()
		return
	}
	pl.idle <- inst
}

// instance is one instantiated module, used by one goroutine at a time.
type instance struct {
	mod      api.Module
	fnCall   api.Function
	fnAlloc  api.Function
	fnTest   api.Function
	mem      api.Memory
	inPtr    uint32
	inCap    uint32
	stack    []uint64 // reused for CallWithStack
	host     *sandbox.Host
	pending  []byte // host reply waiting for forge.take
	stopped  bool   // the tick aborted the call (deadline)
	inFlight bool   // the deadline hit while a host call was running
	broken   bool
	stderr   *tailbuf.Buffer  // the start and end of what the guest wrote to stderr (a fatal error's report)
	capture  *strings.Builder // test output, when running tests
	extra    bool             // made beyond the pool size for a delegated call (no sem token)

	uses, seen uint64        // calls run; uses at the last trim
	size       int64         // linear memory size in acct
	acct       *atomic.Int64 // the program's LiveBytes, nil until a pool adopts it
	live       *liveCounts   // nil outside a Sandbox
}

// What of the guest's stderr an instance keeps: the start, and an end long enough for the guest
// runtime's whole report of a fatal error after any output of the guest's own (a stack overflow's,
// with its 100-frame traceback, measured 14 KiB).
const (
	stderrHead = 4 << 10
	stderrTail = 32 << 10
)

type instanceKey struct{}

func instanceFrom(ctx context.Context) *instance {
	inst, _ := ctx.Value(instanceKey{}).(*instance)
	return inst
}

func newInstance(ctx context.Context, eng *engine, cm wazero.CompiledModule, test bool) (*instance, error) {
	inst := &instance{stack: make([]uint64, 1), stderr: tailbuf.New(stderrHead, stderrTail)}
	cfg := wazero.NewModuleConfig().
		WithName("").
		WithStartFunctions("_initialize").
		WithStdout(stdoutWriter{inst}).
		WithStderr(inst.stderr).
		// The guest's Go runtime paces its collector by this clock. wazero's default is a fake
		// one that advances 1 ms per reading: each collection then looks like 10+ ms of pause,
		// the GC CPU limiter turns off assists, and with no preemption in wasm no mark worker
		// ever runs, so a loop that only makes garbage grows to the memory cap. A monotonic
		// clock relative to an arbitrary origin reveals nothing of the host's wall clock.
		WithSysNanotime()
	if test {
		// Acceptance tests may read the clock and draw random inputs (the gate allows time.Now,
		// time.Since and math/rand in test files only), as they do on the yaegi backend: the real
		// clock and randomness, not wazero's deterministic defaults. Artifact calls keep wazero's
		// fixed wall clock and deterministic randomness.
		cfg = cfg.WithSysWalltime().WithRandSource(cryptorand.Reader)
	}
	ictx, cancel := context.WithTimeout(ctx, sandbox.DefaultTimeout)
	defer cancel()
	ictx = context.WithValue(ictx, instanceKey{}, inst)
	ictx = withMemoryAllocator(ictx)
	mod, err := eng.rt.InstantiateModule(ictx, cm, cfg)
	if err != nil {
		return nil, inst.classify(ictx, err, "initialize")
	}
	inst.mod = mod
	inst.mem = mod.Memory()
	if eng.live != nil {
		inst.live = eng.live
		eng.live.instances.Add(1)
	}
	inst.fnCall = mod.ExportedFunction("forge_call")
	inst.fnAlloc = mod.ExportedFunction("forge_alloc")
	inst.fnTest = mod.ExportedFunction("forge_test")
	setup := mod.ExportedFunction("forge_setup")
	if (inst.fnCall == nil && !test) || (inst.fnTest == nil && test) || inst.fnAlloc == nil || setup == nil || inst.mem == nil {
		inst.close()
		return nil, sandbox.Errorf(sandbox.KindInternal, "wasm: module lacks the forge exports")
	}
	res, err := setup.Call(ictx, stackFor(sandbox.Limits{MemoryBytes: int64(eng.pages) * 65536}))
	if err != nil {
		cerr := inst.classify(ictx, err, "setup")
		inst.close()
		return nil, cerr
	}
	inst.inPtr, inst.inCap = uint32(res[0]>>32), uint32(res[0])
	return inst, nil
}

func (inst *instance) healthy() bool { return !inst.broken }

func (inst *instance) close() {
	if inst.mod == nil {
		return
	}
	inst.mod.Close(context.Background())
	inst.mod = nil
	if inst.live != nil {
		inst.live.instances.Add(-1)
	}
	if inst.acct != nil {
		inst.acct.Add(-inst.size)
	}
}

// adopt makes inst, fresh from newInstance, count in the program's LiveBytes.
func (pl *pool) adopt(inst *instance) *instance {
	inst.acct = pl.acct
	inst.size = int64(inst.mem.Size())
	pl.acct.Add(inst.size)
	return inst
}

// input returns a view of the guest's input buffer of n bytes, growing it if needed.
func (inst *instance) input(ctx context.Context, n uint32) ([]byte, error) {
	if n > inst.inCap {
		inst.stack[0] = uint64(n)
		if err := inst.fnAlloc.CallWithStack(ctx, inst.stack); err != nil {
			return nil, inst.classify(ctx, err, "alloc")
		}
		inst.inPtr, inst.inCap = uint32(inst.stack[0]>>32), uint32(inst.stack[0])
	}
	buf, ok := inst.mem.Read(inst.inPtr, n)
	if !ok {
		inst.broken = true
		return nil, sandbox.Errorf(sandbox.KindInternal, "wasm: input buffer out of range")
	}
	return buf, nil
}

// call runs one call: frames args into guest memory, calls forge_call, reads the tagged result.
func (inst *instance) call(ctx context.Context, host *sandbox.Host, args []json.RawMessage, lim sandbox.Limits) (json.RawMessage, error) {
	inst.host, inst.stopped, inst.inFlight = host, false, false
	inst.stderr.Reset()
	n := 8
	for _, a := range args {
		n += 4 + len(a)
	}
	ctx = context.WithValue(ctx, instanceKey{}, inst)
	buf, err := inst.input(ctx, uint32(n))
	if err != nil {
		return nil, err
	}
	binary.LittleEndian.PutUint64(buf, stackFor(lim))
	off := 8
	for _, a := range args {
		binary.LittleEndian.PutUint32(buf[off:], uint32(len(a)))
		off += 4 + copy(buf[off+4:], a)
	}
	inst.stack[0] = uint64(n)
	if err := inst.fnCall.CallWithStack(ctx, inst.stack); err != nil {
		return nil, inst.classify(ctx, err, "call")
	}
	ptr, size := uint32(inst.stack[0]>>32), uint32(inst.stack[0])
	res, ok := inst.mem.Read(ptr, size)
	if !ok || size == 0 {
		inst.broken = true
		return nil, sandbox.Errorf(sandbox.KindInternal, "wasm: result out of range")
	}
	if value, err, ok := guestgen.Result(res, lim.OutputBytes); ok {
		if errors.Is(err, guestgen.ErrBadReport) {
			inst.broken = true
		}
		return value, err
	}
	switch res[0] {
	case 'a': // a lean guest hands an argument back (see callLean)
		if len(res) == 5 {
			return nil, argsRejected(binary.LittleEndian.Uint32(res[1:]))
		}
	}
	inst.broken = true
	return nil, sandbox.Errorf(sandbox.KindInternal, "wasm: bad result tag %q", res[0])
}

const depthHint = guestgen.DepthHint

// classify turns what a guest call returned into a typed error; the instance is discarded.
func (inst *instance) classify(ctx context.Context, err error, stage string) *sandbox.Error {
	inst.broken = true
	stderr := inst.stderr.String()
	switch {
	case inst.stopped || (ctx.Err() != nil && !strings.Contains(stderr, "fatal error")):
		e := &sandbox.Error{Kind: sandbox.KindDeadline, Message: "deadline exceeded", Err: ctx.Err()}
		if errors.Is(ctx.Err(), context.Canceled) {
			e.Message = "call cancelled"
		}
		if inst.inFlight {
			e.HostCallInFlight = true
			e.Message = "deadline exceeded while a host call was in flight"
		}
		return e
	}
	if e := guestgen.CrashError(stderr, err); e != nil {
		return e
	}
	if strings.Contains(err.Error(), "wasm error: stack overflow") {
		// wazero's own call-stack ceiling: its interpreter allows 2,000 wasm frames, far fewer
		// than the guest's Go stack cap (tests rerun such a stop compiled, see Test).
		return &sandbox.Error{Kind: sandbox.KindDepth, Message: "call depth exceeded: the wasm call stack overflowed", Hint: depthHint, Err: err}
	}
	var exit *sys.ExitError
	msg := err.Error()
	if errors.As(err, &exit) {
		msg = fmt.Sprintf("guest exited with code %d", exit.ExitCode())
	}
	if s := guestgen.CrashReport(stderr); s != "" {
		msg += ": " + s
	}
	kind := sandbox.KindPanic
	if stage != "call" && stage != "initialize" {
		kind = sandbox.KindInternal
	}
	return &sandbox.Error{Kind: kind, Message: stage + ": " + msg, Err: err}
}

// stdoutWriter sends what the guest prints to the current call's logs (kept only when Log is
// granted), or to the test report while tests run.
type stdoutWriter struct{ inst *instance }

func (w stdoutWriter) Write(b []byte) (int, error) {
	if c := w.inst.capture; c != nil {
		if c.Len() < 1<<20 {
			c.Write(b)
		}
		return len(b), nil
	}
	if h := w.inst.host; h != nil {
		h.AppendLogBytes(bytes.TrimRight(b, "\n"))
	}
	return len(b), nil
}
