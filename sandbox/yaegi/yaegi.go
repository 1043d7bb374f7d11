package yaegi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"io"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing/fstest"
	"time"

	"github.com/traefik/yaegi/interp"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/yaegi/symbols"
)

// Options configure a yaegi Sandbox.
type Options struct {
	// PoolSize bounds the interpreters kept per program (default 2 x GOMAXPROCS). Calls beyond it
	// wait for a free interpreter. A program makes them on demand (one per concurrent call) and
	// ends those beyond the first after IdleTimeout.
	PoolSize int
	// Worker configures isolation mode; see WorkerConfig.
	Worker WorkerConfig
	// Isolation "process" isolates every program this sandbox compiles; otherwise a program is
	// isolated when its Source.Limits.Isolation says so (see Compile).
	Isolation string
	// IdleTimeout: interpreters beyond a program's first that have been idle this long are
	// ended (their memory is freed), and so are worker processes beyond a program's first.
	// Default DefaultIdleTimeout; negative: never.
	IdleTimeout time.Duration
}

// Sandbox is the yaegi backend: in-process interpretation behind the policy gate and source
// guards, with a bounded pool of precompiled interpreters per program, or worker processes in
// isolation mode.
type Sandbox struct {
	opts    Options
	workers *workerPool
	closed  atomic.Bool
	// life ends with Close: programs refuse calls, the sweeper stops.
	life context.Context
	stop context.CancelFunc
	// sweeper trims idle pools (nil when IdleTimeout is disabled).
	sweeper *sweeper
}

var (
	_ sandbox.Sandbox = (*Sandbox)(nil)
	_ sandbox.Tester  = (*Sandbox)(nil)
)

// New returns a yaegi sandbox.
func New(opts Options) *Sandbox {
	if opts.PoolSize <= 0 {
		opts.PoolSize = 2 * runtime.GOMAXPROCS(0)
	}
	if opts.IdleTimeout == 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	s := &Sandbox{opts: opts}
	s.life, s.stop = context.WithCancel(context.Background())
	s.sweeper = newSweeper(s.life, opts.IdleTimeout)
	s.workers = newWorkerPool(opts.Worker)
	s.workers.idleTimeout = opts.IdleTimeout
	return s
}

// Program is a compiled artifact with its pool of interpreters.
type Program struct {
	src  sandbox.Source
	sum  string
	sig  sandbox.Signature
	code string     // rewritten source the interpreters run
	ht   *hostTypes // nil: args are decoded inside the interpreter
	// copies are the mutable package variables the code references: each interpreter gets its own.
	copies []copyRef
	// generic are the generic standard package sources (pruned) compiled into each interpreter,
	// imports the code's import paths (which symbol tables it gets, see tablesFor).
	generic, imports []string
	// guarded is set when the rewrite added a depth guard (the guard needs a per-call channel).
	guarded bool
	// isolated programs exist only in worker processes: the host holds no interpreter.
	isolated bool
	// detached: calls run on a goroutine of their own, so that the caller gets its deadline even
	// when native code outlives it (see detachedImports).
	detached bool

	// The pool (see pool.go): idle interpreters, most recently used last, with one avail token
	// each; sem holds one token per live interpreter (at most Options.PoolSize).
	mu    sync.Mutex
	idle  []*instance
	avail chan struct{}
	sem   chan struct{}
	spare chan *instance // idle interpreters made beyond the pool for delegated calls (no token)
	// armed: the program is in its sandbox's sweep set (it has interpreters to trim).
	armed   atomic.Bool
	sb      *Sandbox
	workers *workerPool
	// release (isolated programs) drops this program's reference to its workers, once.
	release func()
	// life is cancelled by Close, by a cleanup once the program is unreachable, or by the
	// sandbox's Close: a call (ready) then refuses to start.
	life    context.Context
	end     context.CancelFunc
	closedP atomic.Bool
}

// Close drops the program's interpreters (see sandbox.Program): the idle ones now, those in a
// call when it returns. An isolated program's workers are stopped once no
// other live program of the same code uses them.
func (p *Program) Close() error {
	if p.closedP.Swap(true) {
		return nil
	}
	if p.release != nil {
		p.release()
	}
	if p.isolated {
		return nil
	}
	if p.end != nil {
		p.end()
	}
	p.mu.Lock()
	clear(p.idle)
	p.idle = nil
	p.mu.Unlock()
	for {
		select {
		case <-p.spare:
			continue
		default:
		}
		break
	}
	return nil
}

// Signature returns the function's signature.
func (p *Program) Signature() sandbox.Signature { return p.sig }

// Checksum returns the sha256 of the original code.
func (p *Program) Checksum() string { return p.sum }

// Source returns the original source.
func (p *Program) Source() sandbox.Source { return p.src }

// RewrittenCode returns the source the interpreter runs after the guards and gap rewrites (for
// debugging a rewrite; line numbers match the original).
func (p *Program) RewrittenCode() string { return p.code }

// slot is how one interpreter exchanges a call's args and results with the host: native
// variables and functions the generated stub reads and writes, no source parsed per call.
type slot struct {
	args     []json.RawMessage
	bad      int
	badErr   error
	MaxDepth int
	// What the guest handed back, produced during the call (see guest.go): the result's
	// JSON, the returned error's text, or a failure (a panic, or one while producing those).
	outJSON  []byte
	errText  string
	hasErr   bool
	failed   *sandbox.Error
	depthHit bool
	ctx      context.Context // the current call's context
	in       sandbox.Input   // the current call's input
	hostMu   sync.Mutex      // host is created during the call (maybe detached), read after it
	host     *sandbox.Host   // created on the first host call (or eagerly by tests)
	stdout   hostWriter
	// cancel stops the current call (the depth guard calls it). A program's call (instance.call)
	// stops the interpreter at once, on the calling goroutine, and done is nil; a test run
	// (ExecuteWithContext) is stopped asynchronously by its waiting goroutine, and done is
	// closed when the run has returned to the host.
	cancel   func()
	done     chan struct{}
	panicPos string // first "line:col: panic" line yaegi reported in this call
}

// getHost returns the current call's host API, creating it on first use so that calls that make
// no host call pay nothing for it.
func (s *slot) getHost() *sandbox.Host {
	s.hostMu.Lock()
	defer s.hostMu.Unlock()
	if s.host == nil {
		if s.ctx == nil {
			panic(sandbox.Errorf(sandbox.KindInternal, "host API used outside a call"))
		}
		s.host = sandbox.NewHost(s.ctx, s.in)
	}
	return s.host
}

// usedHost returns the current call's host if guest code used one.
func (s *slot) usedHost() *sandbox.Host {
	s.hostMu.Lock()
	defer s.hostMu.Unlock()
	return s.host
}

// setHost installs (or clears) the host for the next call.
func (s *slot) setHost(h *sandbox.Host) {
	s.hostMu.Lock()
	s.host = h
	s.hostMu.Unlock()
}

// finish merges the host's evidence (if a host was used) into the call's outcome.
func (s *slot) finish(out *sandbox.Output, err error) error {
	if h := s.usedHost(); h != nil {
		return h.Finish(out, err)
	}
	if err != nil {
		return sandbox.CapError(err) // a returned error or panic text is bounded like Finish bounds it
	}
	return nil
}

func (s *slot) decode(i int, p any) bool {
	if i >= len(s.args) || len(s.args[i]) == 0 {
		return true // absent variadic or optional: zero value
	}
	err := sandbox.UnmarshalArg(s.args[i], p)
	symbols.ZonesOf(p) // times in the guest's zone, not the host's (symbols/tz.go)
	if err != nil {
		// Keep the text only, taken here during the call: the error may wrap one
		// returned by a guest UnmarshalJSON method.
		s.bad, s.badErr = i, errors.New(err.Error())
		return false
	}
	return true
}

// depthExceeded stops the interpreter instead of panicking: unwinding a panic through thousands of
// interpreted frames takes yaegi seconds. A program's call is stopped before cancel returns: every
// interpreted frame then returns without executing anything more. A test run's goroutine parks
// here until the host has the result (its stop comes from another goroutine, a little later).
func (s *slot) depthExceeded() {
	s.depthHit = true
	if s.cancel == nil { // package initializers: no call to stop yet
		panic(&sandbox.Error{Kind: sandbox.KindDepth, Message: fmt.Sprintf("call depth exceeded %d", s.MaxDepth), Hint: depthHint})
	}
	s.cancel()
	if s.done != nil {
		<-s.done
	}
}

const depthHint = "unbounded or too deep recursion: make it iterative or bound it"

// panicWriter keeps the first line yaegi writes about a panic (its innermost position).
type panicWriter struct{ s *slot }

func (w panicWriter) Write(b []byte) (int, error) {
	if w.s.panicPos == "" {
		w.s.panicPos, _, _ = strings.Cut(string(b), "\n")
	}
	return len(b), nil
}

// hostWriter sends what guest code prints (fmt.Print*, print, println) to the current call's logs.
type hostWriter struct{ s *slot }

func (w hostWriter) Write(b []byte) (int, error) {
	if w.s.in.Caps.Log && w.s.ctx != nil {
		w.s.getHost().AppendLog(strings.TrimRight(string(b), "\n"))
	}
	return len(b), nil
}

// instance is one interpreter with the program loaded.
type instance struct {
	in   *interp.Interpreter
	slot *slot
	tv   *typedVars // host-typed signatures only
	cc   *callCtx
	// fn is the call (forge__run, or forge__call): a function value of the interpreter's,
	// called on the caller's goroutine (see call).
	fn func()
	// argBuf is reused by every call's argument slicing.
	argBuf []json.RawMessage
	// extra: made beyond the pool size for a re-entrant (delegated) call, holding no sem token.
	extra bool
	// used is when its last call started.
	used time.Time
	// ran: a call has run in it (a per-call program takes only interpreters where none has).
	ran bool
}

// detachedImports are the allowlisted packages whose native functions can run far longer than
// their input took to build: math/big's Exp, MulRange, Binomial, ProbablyPrime and Sqrt turn a few
// interpreted steps into minutes of native work that no stop can interrupt (the interpreter
// checks for a stop between its own steps only). Everything else native on the allowlist is
// about linear in what guest code built or is a guest callback (stopped like any guest code).
var detachedImports = []string{"math/big"}

// detachedCode reports whether a program's calls run detached (see Program.detached).
func detachedCode(code string) bool {
	for _, path := range importPaths(code) {
		if slices.Contains(detachedImports, path) {
			return true
		}
	}
	return false
}

// detachGrace is how long a detached call's caller waits, after the stop, for the interpreter to
// return: interpreted frames return at their next step, native code only when it is done.
const detachGrace = 20 * time.Millisecond

// callDetached is call on a goroutine of its own (a program with detachedImports): the caller
// waits for it or for the call's end (deadline, cancellation, depth guard) plus detachGrace.
// returned is false when the goroutine is still running native code: the instance is then
// abandoned to it.
func (inst *instance) callDetached() (stopped, returned bool) {
	ret := make(chan bool, 1)
	go func() { ret <- inst.call() }()
	select {
	case stopped = <-ret:
		return stopped, true
	case <-inst.cc.Done():
	}
	grace := time.NewTimer(detachGrace)
	defer grace.Stop()
	select {
	case stopped = <-ret:
		return stopped, true
	case <-grace.C:
		return true, false
	}
}

// call runs the prepared call on the calling goroutine and reports whether the interpreter was
// stopped during it (by the call's deadline, its caller's cancellation or the depth guard).
//
// There is no goroutine of the interpreter's own: a call is an ordinary call of a Go function
// value the interpreter made (a reflect.MakeFunc wrapper around the interpreted function), so it
// runs on the caller's warm stack with no hand-off. Cancellation is what it was: the instance's
// callCtx stops the interpreter when its deadline passes, its parent is cancelled or the depth
// guard trips (see callCtx.cancel and stopInterpreter), and every interpreted frame then returns
// at its next step, channel operations included. A panic no guest code recovered unwinds to here
// and is formatted by slot.recovered, still under the call's deadline (a guest String method that
// loops is stopped like any other loop), before the host looks at anything.
func (inst *instance) call() (stopped bool) {
	defer func() {
		if r := recover(); r != nil {
			inst.slot.recovered(r)
			if inst.slot.failed == nil { // recovered ignores nil; a panic(nil) is a *runtime.PanicNilError
				inst.slot.fail(sandbox.KindPanic, "panic")
			}
		}
		stopped = inst.cc.stopped()
	}()
	inst.fn()
	return
}

// emptyFS is the interpreter's source filesystem: no import is ever loaded from disk.
var emptyFS = fstest.MapFS{}

// newInterpreter makes an interpreter for one program (or test suite): the allowlisted symbol
// tables, the generic standard packages the code imports (generic, see genericImports), the
// program's own copies of the package variables it references, and the slot and host API.
func newInterpreter(s *slot, test bool, tv *typedVars, copies []copyRef, generic, imports []string) (*interp.Interpreter, error) {
	s.stdout = hostWriter{s}
	in := interp.New(interp.Options{
		Stdin:                strings.NewReader(""),
		Stdout:               s.stdout,
		Stderr:               panicWriter{s},
		Args:                 []string{"artifact"},
		Env:                  []string{},
		SourcecodeFilesystem: emptyFS,
		GoPath:               "/nonexistent",
	})
	slotSyms := map[string]reflect.Value{
		"Decode":        reflect.ValueOf(s.decode),
		"DepthExceeded": reflect.ValueOf(s.depthExceeded),
		"MaxDepth":      reflect.ValueOf(&s.MaxDepth).Elem(),
		"SetErr":        reflect.ValueOf(s.setErr),
		"Encode":        reflect.ValueOf(s.encode),
		"CheckWrite":    reflect.ValueOf(s.checkWrite),
	}
	if tv != nil {
		tv.exports(slotSyms)
	}
	hostSyms := hostExports(s)
	if err := useStdlib(in, s.stdout, test, generic, tablesFor(imports, generic, slotSyms, hostSyms)); err != nil {
		return nil, err
	}
	if len(copies) > 0 {
		// The mutable package variables the program references, as this interpreter's own.
		c := symbols.NewCopier()
		own := interp.Exports{}
		for _, r := range copies {
			if own[r.pkg] == nil {
				own[r.pkg] = map[string]reflect.Value{}
			}
			own[r.pkg][r.name] = c.Var(r.hostVar)
		}
		if err := in.Use(own); err != nil {
			return nil, fmt.Errorf("load package variables: %w", err)
		}
	}
	if err := in.Use(interp.Exports{
		"forge/slot/slot":     slotSyms,
		HostPackage + "/host": hostSyms,
	}); err != nil {
		return nil, fmt.Errorf("load host API: %w", err)
	}
	return in, nil
}

// prepare parses, gates and rewrites src; it is everything Compile does before the interpreter.
func prepare(src sandbox.Source) (code string, sig sandbox.Signature, ht *hostTypes, guarded bool, err error) {
	fset, f, parsed, err := gateSource(src.Code)
	if err != nil {
		return "", sig, nil, false, err
	}
	fd, err := sandbox.FindFunc(f, src.Func)
	if err != nil {
		return "", sig, nil, false, err
	}
	sig, err = sandbox.ParseSignature(sandbox.Source{Code: parsed, Func: fd.Name.Name})
	if err != nil {
		return "", sig, nil, false, err
	}
	info, undef := typeCheckUndefined(fset, []*ast.File{f})
	if undef != nil {
		return "", sig, nil, false, undef
	}
	r := newRewriter(fset, f, parsed, info)
	r.guardDepth()
	r.guardWrites()
	r.gaps()
	extra := r.autoImports()
	if r.needSort {
		extra += "; import forge__sort \"sort\""
	}
	r.packageMain(extra)
	ht = hostTypesOf(sig, r.declared)
	typedResult := ht != nil && ht.result != nil
	run, _ := runFunc(sig, canDirect(sig, ht, r.guarded))
	return r.apply(globals + callStub(sig, ht != nil, typedResult) + run), sig, ht, r.guarded, nil
}

// runFunc is the function a call runs (see instance.call) and its name: for a host-typed,
// unguarded call whose result needs no guest method, the assignment itself (one interpreted
// call less than going through forge__call); anything else is forge__call.
func runFunc(sig sandbox.Signature, direct bool) (code, name string) {
	if !direct {
		return "", "forge__call"
	}
	return "func forge__run() {\n\t" + directCall(sig) + "\n}\n", "forge__run"
}

// callStub is the function each call runs: decode args into the real parameter types (inside the
// interpreter, so types declared in the file work), call, hand the results to the host.
// With typed (host-decoded) args the stub reads the native variables *P0..*Pn; with a typed
// result it writes *R. Any other result is encoded to JSON, and a returned error reduced to its
// text, by slot functions called here, during the call (see guest.go): the host never calls a
// method of a guest value after it.
func callStub(sig sandbox.Signature, typedArgs, typedResult bool) string {
	var b strings.Builder
	b.WriteString("func forge__call() {\n\tforge__depth = 0\n\tforge__maxDepth = forge__slot.MaxDepth\n")
	args := make([]string, len(sig.Params))
	for i, p := range sig.Params {
		if typedArgs {
			fmt.Fprintf(&b, "\ta%d := *forge__slot.P%d\n", i, i)
			args[i] = fmt.Sprintf("a%d", i)
			continue
		}
		fmt.Fprintf(&b, "\tvar a%d %s\n\tif !forge__slot.Decode(%d, &a%d) {\n\t\treturn\n\t}\n", i, p.Type, i, i)
		args[i] = fmt.Sprintf("a%d", i)
	}
	call := sig.Func + "(" + strings.Join(args, ", ")
	if sig.Variadic {
		call += "..."
	}
	call += ")"
	store := func(v string) string {
		if typedResult {
			return "*forge__slot.R = " + v
		}
		return "forge__slot.Encode(" + v + ")"
	}
	switch sig.Shape {
	case sandbox.ResultNone:
		fmt.Fprintf(&b, "\t%s\n", call)
	case sandbox.ResultValue:
		fmt.Fprintf(&b, "\t%s\n", store(call))
	case sandbox.ResultError:
		fmt.Fprintf(&b, "\tif err := %s; err != nil {\n\t\tforge__slot.SetErr(err)\n\t}\n", call)
	case sandbox.ResultValueError:
		fmt.Fprintf(&b, "\tr, err := %s\n\tif err != nil {\n\t\tforge__slot.SetErr(err)\n\t\treturn\n\t}\n\t%s\n", call, store("r"))
	}
	b.WriteString("}\n")
	return b.String()
}

// directCall is the one-statement call program for a host-typed, unguarded function whose
// result (if any) the host can encode without calling guest code (see canDirect).
func directCall(sig sandbox.Signature) string {
	args := make([]string, len(sig.Params))
	for i := range sig.Params {
		args[i] = fmt.Sprintf("*forge__slot.P%d", i)
	}
	call := sig.Func + "(" + strings.Join(args, ", ")
	if sig.Variadic {
		call += "..."
	}
	call += ")"
	if sig.Shape == sandbox.ResultValue {
		return "*forge__slot.R = " + call
	}
	return call
}

// canDirect reports whether a call may be the function call in one statement: host-typed
// args, no error result (its text must be taken in the guest) and a result, if any, of a type
// with no methods anywhere inside (see hostTypes.result).
func canDirect(sig sandbox.Signature, ht *hostTypes, guarded bool) bool {
	if ht == nil || guarded {
		return false
	}
	switch sig.Shape {
	case sandbox.ResultNone:
		return true
	case sandbox.ResultValue:
		return ht.result != nil
	}
	return false
}

// Compile gates, rewrites and compiles src once; the first interpreter is built now so compile
// errors surface here, later ones on demand up to the pool size.
//
// An isolated program (Options.Isolation or src.Limits.Isolation "process") is only parsed and
// gated here; it is type-checked, compiled and initialized in a worker process of its own, under
// src.Limits (memory cap; Timeout for the initializers) and the worker's compile bound.
func (s *Sandbox) Compile(ctx context.Context, src sandbox.Source) (sandbox.Program, error) {
	if s.closed.Load() {
		return nil, sandbox.Errorf(sandbox.KindInternal, "sandbox closed")
	}
	if s.opts.Isolation == sandbox.IsolationProcess || src.Limits.Isolation == sandbox.IsolationProcess {
		p, err := s.compileIsolated(ctx, src)
		if err != nil {
			return nil, err // not a typed nil
		}
		return p, nil
	}
	code, sig, ht, guarded, err := prepare(src)
	if err != nil {
		return nil, err
	}
	life, end := context.WithCancel(s.life)
	p := &Program{src: src, sum: src.Checksum(), sig: sig, code: code, ht: ht, guarded: guarded, copies: referencedCopies(code), generic: genericCode(code), imports: importPaths(code), detached: detachedCode(code),
		avail: make(chan struct{}, s.opts.PoolSize), spare: make(chan *instance, sandbox.DefaultMaxCallDepth), sem: make(chan struct{}, s.opts.PoolSize), sb: s, workers: s.workers, life: life, end: end}
	// Once the program is unreachable, its context leaves the sandbox's and its workers are
	// released (its interpreters are collected with it).
	p.release = s.workers.hold(p.sum, sig.Func, src.Client)
	runtime.AddCleanup(p, func(c programCleanup) { c.end(); c.release() }, programCleanup{end, p.release})
	inst, err := p.newInstance(ctx)
	if err != nil {
		return nil, err
	}
	p.sem <- struct{}{}
	p.put(inst, true)
	return p, nil
}

func (p *Program) newInstance(ctx context.Context) (*instance, error) {
	s := &slot{MaxDepth: sandbox.DefaultMaxDepth}
	var tv *typedVars
	if p.ht != nil {
		tv = newTypedVars(p.ht)
	}
	in, err := newInterpreter(s, false, tv, p.copies, p.generic, p.imports)
	if err != nil {
		return nil, &sandbox.Error{Kind: sandbox.KindInternal, Message: err.Error(), Err: err}
	}
	prog, err := compileRecovered(in, p.code)
	if err != nil {
		return nil, compileError(err)
	}
	// Load the file: globals and init functions run here, under the default deadline.
	lctx, cancel := context.WithTimeout(ctx, sandbox.DefaultTimeout)
	defer cancel()
	s.ctx, s.in = lctx, sandbox.Input{}
	_, err = in.ExecuteWithContext(lctx, prog)
	if err != nil {
		return nil, runError(err, s, lctx) // the interpreter is dropped: leave its slot alone
	}
	s.ctx = nil
	s.setHost(nil)
	fn, err := callFunc(in, p.sig, canDirect(p.sig, p.ht, p.guarded))
	if err != nil {
		return nil, err
	}
	inst := &instance{in: in, slot: s, tv: tv, cc: newCallCtx(in), fn: fn, used: time.Now()}
	s.cancel = inst.cc.Cancel // bound once: a method value per call would allocate
	return inst, nil
}

// callFunc returns the interpreter's call function (see runFunc) as a Go function value. The
// program is loaded: evaluating the name runs no guest code. It must not be evaluated by
// ExecuteWithContext, which would give the interpreter a new cancellation channel that the
// loaded program's frames do not watch (see stopInterpreter).
func callFunc(in *interp.Interpreter, sig sandbox.Signature, direct bool) (func(), error) {
	_, name := runFunc(sig, direct)
	prog, err := in.Compile(name)
	if err == nil {
		var v reflect.Value
		if v, err = in.Execute(prog); err == nil {
			if v.IsValid() && v.CanInterface() {
				if fn, ok := v.Interface().(func()); ok {
					return fn, nil
				}
			}
			err = fmt.Errorf("%s evaluated to %v, not a func()", name, v)
		}
	}
	return nil, &sandbox.Error{Kind: sandbox.KindInternal, Message: "yaegi: the call function: " + err.Error(), Err: err}
}

// compileRecovered is in.Compile with yaegi's own panics (its compiler panics on some valid Go,
// e.g. a sparse keyed array literal `[...]byte{1<<30 - 1: 1}`) turned into a compile error: the
// process that compiles, host or worker, must survive the code it is given.
func compileRecovered(in *interp.Interpreter, code string) (prog *interp.Program, err error) {
	defer func() {
		if r := recover(); r != nil {
			prog, err = nil, fmt.Errorf("the interpreter cannot compile this code (it failed with: %v): write it another way", r)
		}
	}()
	return in.Compile(code)
}

// gapHints explains interpreter gaps the rewrites could not cover.
var gapHints = []struct{ match, hint string }{
	{"undefined: min", "min is not available here: write the comparison or a small helper"},
	{"undefined: max", "max is not available here: write the comparison or a small helper"},
	{"undefined: clear", "clear is not available here: delete keys in a loop or reassign"},
	{"undefined selector: slices.Sort", "use sort.Ints / sort.Strings / sort.Slice"},
	{"undefined selector: slices.", "this slices function is not available: use sort or a loop"},
	{"undefined selector: maps.Keys", "collect keys with a for range loop"},
	{"undefined selector: maps.Values", "collect values with a for range loop"},
	{"cannot range over", "range over this value is not available here: count with for i := 0; i < n; i++, or range over a slice (an iterator function's values collected first)"},
	{"undefined selector", "the symbol is not on the sandbox allowlist or does not exist"},
}

func compileError(err error) *sandbox.Error {
	e := sandbox.CompileError(err)
	for _, g := range gapHints {
		if strings.Contains(e.Message, g.match) {
			e.Hint = g.hint
			break
		}
	}
	return e
}

// runError classifies what ExecuteWithContext returned.
func runError(err error, s *slot, ctx context.Context) *sandbox.Error {
	if se, ok := err.(*sandbox.Error); ok {
		return se
	}
	var pe interp.Panic
	if errors.As(err, &pe) {
		if se, ok := pe.Value.(*sandbox.Error); ok {
			return se
		}
		// A panic that escaped every guest recover (package initializers, test stubs): the
		// value may be the model's, so it is described without calling its methods.
		return &sandbox.Error{Kind: sandbox.KindPanic, Message: "panic: " + hostDescribe(pe.Value), Line: lineOf(s.panicPos)}
	}
	if s.depthHit {
		return &sandbox.Error{Kind: sandbox.KindDepth, Message: fmt.Sprintf("call depth exceeded %d", s.MaxDepth), Hint: depthHint}
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || ctx.Err() != nil {
		e := &sandbox.Error{Kind: sandbox.KindDeadline, Message: "deadline exceeded", Err: err}
		if h := s.usedHost(); h != nil && h.InFlight() {
			e.HostCallInFlight = true
			e.Message = "deadline exceeded while a host call was in flight"
		}
		if errors.Is(err, context.Canceled) {
			e.Message = "call cancelled"
		}
		return e
	}
	return &sandbox.Error{Kind: sandbox.KindPanic, Message: err.Error(), Err: err}
}

// lineOf reads the line of a yaegi position ("3:24: ..." or "_.go:3:24: ...").
func lineOf(pos string) int { return sandbox.CompileError(errors.New(pos)).Line }

// Run calls the program's function with in.Args.
func (s *Sandbox) Run(ctx context.Context, prog sandbox.Program, in sandbox.Input) (sandbox.Output, error) {
	p, ok := prog.(*Program)
	if !ok {
		return sandbox.Output{}, sandbox.Errorf(sandbox.KindInternal, "yaegi: program of type %T is not a yaegi program", prog)
	}
	if p.closedP.Load() {
		return sandbox.Output{}, sandbox.Errorf(sandbox.KindInternal, "yaegi: run of a closed program (a forge bug: programs are closed only when no call uses them)")
	}
	in.Limits = in.Limits.WithDefaults()
	if p.isolated || in.Limits.Isolation == sandbox.IsolationProcess {
		return s.workers.run(ctx, p, in)
	}
	if ctx.Err() != nil {
		return sandbox.Output{}, &sandbox.Error{Kind: sandbox.KindDeadline, Message: "call cancelled before it started", Err: ctx.Err()}
	}
	return p.run(ctx, in.Args, nil, in)
}

// run calls the function with raw args (JSON object or array), or with args already ordered.
func (p *Program) run(ctx context.Context, raw json.RawMessage, args []json.RawMessage, in sandbox.Input) (sandbox.Output, error) {
	start := time.Now()
	// A per-call program (sandbox.InstancePerCall) runs each call in an interpreter no call has
	// run in, and drops it afterwards.
	fresh := in.Limits.Instance == sandbox.InstancePerCall
	var inst *instance
	var err error
	if fresh {
		inst, err = p.getFresh(ctx, in.Limits.Timeout)
	} else {
		inst, err = p.get(ctx, in.Limits.Timeout)
	}
	if err != nil {
		return sandbox.Output{}, err
	}
	inst.used, inst.ran = start, true
	if args == nil {
		if args, err = sandbox.AppendArgs(inst.argBuf, p.sig, raw); err != nil {
			p.put(inst, !fresh)
			return sandbox.Output{}, err
		}
		inst.argBuf = args[:0]
	}
	sl := inst.slot
	if inst.tv != nil {
		for i, v := range inst.tv.args {
			var raw json.RawMessage
			if i < len(args) {
				raw = args[i]
			}
			if err := decodeArg(raw, v, inst.tv.ptrs[i]); err != nil {
				p.put(inst, !fresh)
				prm := p.sig.Params[i]
				return sandbox.Output{}, &sandbox.Error{Kind: sandbox.KindArgs, Param: prm.Name, Message: fmt.Sprintf("want %s: %v", prm.Type, err), Err: err}
			}
		}
	}
	cc := inst.cc
	cc.start(ctx, in.Limits.Timeout)
	sl.ctx, sl.in, sl.args, sl.bad, sl.MaxDepth, sl.depthHit, sl.panicPos = cc, in, args, -1, in.Limits.MaxDepth, false, ""
	sl.outJSON, sl.errText, sl.hasErr, sl.failed = nil, "", false, nil
	var xerr error
	stopped, returned := true, true
	if p.detached {
		stopped, returned = inst.callDetached()
	} else {
		stopped = inst.call()
	}
	if stopped {
		xerr = cc.Err() // deadline, cancellation or the depth guard: the interpreter is spent
	}
	keep := cc.finish()
	if !returned {
		// Native code outlived the call's deadline: the caller gets the deadline now, the
		// goroutine still running is left the slot (nothing of it is read here) and the
		// interpreter (dropped).
		cc.timer.Stop()
		p.put(inst, false)
		rerr := &sandbox.Error{Kind: sandbox.KindDeadline, Message: "deadline exceeded while native code was running (it goes on until it returns)", Err: xerr,
			Hint: "bound the sizes given to math/big (exponents, factorials, shifts), or run this code isolated"}
		if errors.Is(xerr, context.Canceled) {
			rerr.Message = "call cancelled while native code was running (it goes on until it returns)"
		}
		return sandbox.Output{Duration: time.Since(start)}, rerr
	}
	var out sandbox.Output
	var rerr error
	switch {
	case xerr != nil:
		rerr = runError(xerr, sl, cc)
		keep = false
	case sl.bad >= 0:
		prm := p.sig.Params[sl.bad]
		rerr = &sandbox.Error{Kind: sandbox.KindArgs, Param: prm.Name, Message: fmt.Sprintf("want %s: %v", prm.Type, sl.badErr), Err: sl.badErr}
	case sl.depthHit:
		rerr = &sandbox.Error{Kind: sandbox.KindDepth, Message: fmt.Sprintf("call depth exceeded %d (recovered by the code)", sl.MaxDepth), Hint: depthHint}
	case sl.failed != nil:
		e := *sl.failed
		if e.Kind == sandbox.KindPanic && e.Line == 0 {
			e.Line = lineOf(sl.panicPos)
		}
		rerr, keep = &e, false
	case sl.hasErr:
		rerr = &sandbox.Error{Kind: sandbox.KindReturned, Message: sl.errText}
	case inst.tv != nil && inst.tv.res.IsValid():
		out.Value, rerr = encodeTyped(inst.tv.res, in.Limits.OutputBytes)
	default:
		out.Value, rerr = encodedResult(p.sig, sl.outJSON, in.Limits.OutputBytes)
	}
	if !keep {
		cc.timer.Stop() // the interpreter is discarded; its timer must not fire later
	}
	rerr = sl.finish(&out, rerr)
	out.Duration = time.Since(start)
	if fresh && keep {
		keep = false
		cc.timer.Stop() // the interpreter is discarded; its timer must not fire later
	}
	p.put(inst, keep)
	if rerr != nil {
		return sandbox.Output{Logs: out.Logs, Duration: out.Duration, HostCalls: out.HostCalls, UpstreamRead: out.UpstreamRead}, rerr
	}
	return out, nil
}

var nullJSON = json.RawMessage("null")

// encodedResult checks the result JSON the guest produced (slot.encode) against the output cap.
func encodedResult(sig sandbox.Signature, b []byte, maxBytes int) (json.RawMessage, error) {
	if sig.Shape == sandbox.ResultNone || sig.Shape == sandbox.ResultError {
		return nullJSON, nil
	}
	if b == nil {
		return nil, sandbox.Errorf(sandbox.KindInternal, "the call returned no encoded result")
	}
	if len(b) > maxBytes {
		return nil, &sandbox.Error{Kind: sandbox.KindOutput, Message: fmt.Sprintf("result is %d bytes, over the %d-byte cap", len(b), maxBytes)}
	}
	return b, nil
}

// Close ends the sandbox: calls in flight finish, later calls fail; worker processes stop.
func (s *Sandbox) Close() error {
	s.closed.Store(true)
	s.stop()
	return s.workers.close()
}

var _ io.Writer = hostWriter{}

// Name is the backend's name in contracts and the corpus ("yaegi").
func (s *Sandbox) Name() string { return "yaegi" }
