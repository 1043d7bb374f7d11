package yaegi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/token"
	"io"
	"reflect"
	"runtime"
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
	// wait for a free interpreter.
	PoolSize int
	// Worker configures isolation mode (Limits.Isolation == "process"); see WorkerConfig.
	Worker WorkerConfig
}

// Sandbox is the yaegi backend: in-process interpretation behind the policy gate and source
// guards, with a bounded pool of precompiled interpreters per program, or worker processes in
// isolation mode.
type Sandbox struct {
	opts    Options
	workers *workerPool
	closed  atomic.Bool
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
	s := &Sandbox{opts: opts}
	s.workers = newWorkerPool(opts.Worker)
	return s
}

// Program is a compiled artifact with its pool of interpreters.
type Program struct {
	src  sandbox.Source
	sum  string
	sig  sandbox.Signature
	code string // rewritten source the interpreters run

	pool    chan *instance
	sem     chan struct{} // one token per live interpreter
	first   sync.Once
	workers *workerPool
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
	Out      any
	Err      error
	MaxDepth int
	depthHit bool
	host     *sandbox.Host
	stdout   hostWriter
	cancel   context.CancelFunc // stops the current call (depth guard)
	done     chan struct{}      // closed when the current call has returned to the host
	panicPos string             // first "line:col: panic" line yaegi reported in this call
}

func (s *slot) decode(i int, p any) bool {
	if i >= len(s.args) || len(s.args[i]) == 0 {
		return true // absent variadic or optional: zero value
	}
	if err := json.Unmarshal(s.args[i], p); err != nil {
		s.bad, s.badErr = i, err
		return false
	}
	return true
}

// depthExceeded stops the interpreter instead of panicking: unwinding a panic through thousands of
// interpreted frames takes yaegi seconds. The guest goroutine parks here until the host has the
// result, then finds its run stopped and returns without executing anything more.
func (s *slot) depthExceeded() {
	s.depthHit = true
	if s.cancel == nil || s.done == nil {
		panic(&sandbox.Error{Kind: sandbox.KindDepth, Message: fmt.Sprintf("call depth exceeded %d", s.MaxDepth), Hint: depthHint})
	}
	s.cancel()
	<-s.done
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
	if h := w.s.host; h != nil {
		h.AppendLog(strings.TrimRight(string(b), "\n"))
	}
	return len(b), nil
}

// instance is one interpreter with the program loaded and the call stub compiled.
type instance struct {
	in   *interp.Interpreter
	slot *slot
	call *interp.Program
}

// emptyFS is the interpreter's source filesystem: no import is ever loaded from disk.
var emptyFS = fstest.MapFS{}

func newInterpreter(s *slot, test bool) (*interp.Interpreter, error) {
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
	syms := interp.Exports{}
	for k, v := range symbols.Symbols {
		if strings.HasPrefix(k, "github.com/stretchr/testify/") && !test {
			continue
		}
		syms[k] = v
	}
	if err := in.Use(syms); err != nil {
		return nil, fmt.Errorf("load symbols: %w", err)
	}
	if err := in.Use(interp.Exports{
		"forge/slot/slot": {
			"Decode":        reflect.ValueOf(s.decode),
			"DepthExceeded": reflect.ValueOf(s.depthExceeded),
			"Out":           reflect.ValueOf(&s.Out).Elem(),
			"Err":           reflect.ValueOf(&s.Err).Elem(),
			"MaxDepth":      reflect.ValueOf(&s.MaxDepth).Elem(),
		},
		HostPackage + "/host": hostExports(s),
	}); err != nil {
		return nil, fmt.Errorf("load host API: %w", err)
	}
	return in, nil
}

// prepare parses, gates and rewrites src; it is everything Compile does before the interpreter.
func prepare(src sandbox.Source) (code string, sig sandbox.Signature, err error) {
	fset := token.NewFileSet()
	f, parsed, err := sandbox.ParseFile(fset, src.Code)
	if err != nil {
		return "", sig, err
	}
	if err := checkPolicy(fset, f, false); err != nil {
		return "", sig, err
	}
	fd, err := sandbox.FindFunc(f, src.Func)
	if err != nil {
		return "", sig, err
	}
	sig, err = sandbox.ParseSignature(sandbox.Source{Code: parsed, Func: fd.Name.Name})
	if err != nil {
		return "", sig, err
	}
	info := typeCheck(fset, []*ast.File{f})
	r := newRewriter(fset, f, parsed, info)
	r.guardDepth()
	r.gaps()
	extra := r.autoImports()
	if r.needSort {
		extra = "; import forge__sort \"sort\""
	}
	r.packageMain(extra)
	return r.apply(globals + callStub(sig)), sig, nil
}

// callStub is the function each call runs: decode args into the real parameter types (inside the
// interpreter, so types declared in the file work), call, hand the results to the host.
func callStub(sig sandbox.Signature) string {
	var b strings.Builder
	b.WriteString("func forge__call() {\n\tforge__depth = 0\n\tforge__maxDepth = forge__slot.MaxDepth\n")
	args := make([]string, len(sig.Params))
	for i, p := range sig.Params {
		fmt.Fprintf(&b, "\tvar a%d %s\n\tif !forge__slot.Decode(%d, &a%d) {\n\t\treturn\n\t}\n", i, p.Type, i, i)
		args[i] = fmt.Sprintf("a%d", i)
	}
	call := sig.Func + "(" + strings.Join(args, ", ")
	if sig.Variadic {
		call += "..."
	}
	call += ")"
	switch sig.Shape {
	case sandbox.ResultNone:
		fmt.Fprintf(&b, "\t%s\n", call)
	case sandbox.ResultValue:
		fmt.Fprintf(&b, "\tforge__slot.Out = %s\n", call)
	case sandbox.ResultError:
		fmt.Fprintf(&b, "\tforge__slot.Err = %s\n", call)
	case sandbox.ResultValueError:
		fmt.Fprintf(&b, "\tr, err := %s\n\tforge__slot.Out = r\n\tforge__slot.Err = err\n", call)
	}
	b.WriteString("}\n")
	return b.String()
}

// Compile gates, rewrites and compiles src once; the first interpreter is built now so compile
// errors surface here, later ones on demand up to the pool size.
func (s *Sandbox) Compile(ctx context.Context, src sandbox.Source) (sandbox.Program, error) {
	if s.closed.Load() {
		return nil, sandbox.Errorf(sandbox.KindInternal, "sandbox closed")
	}
	code, sig, err := prepare(src)
	if err != nil {
		return nil, err
	}
	p := &Program{src: src, sum: src.Checksum(), sig: sig, code: code,
		pool: make(chan *instance, s.opts.PoolSize), sem: make(chan struct{}, s.opts.PoolSize), workers: s.workers}
	inst, err := p.newInstance(ctx)
	if err != nil {
		return nil, err
	}
	p.sem <- struct{}{}
	p.pool <- inst
	return p, nil
}

func (p *Program) newInstance(ctx context.Context) (*instance, error) {
	s := &slot{MaxDepth: sandbox.DefaultMaxDepth}
	in, err := newInterpreter(s, false)
	if err != nil {
		return nil, &sandbox.Error{Kind: sandbox.KindInternal, Message: err.Error(), Err: err}
	}
	prog, err := in.Compile(p.code)
	if err != nil {
		return nil, compileError(err)
	}
	// Load the file: globals and init functions run here, under the default deadline.
	lctx, cancel := context.WithTimeout(ctx, sandbox.DefaultTimeout)
	defer cancel()
	s.host = sandbox.NewHost(lctx, sandbox.Input{})
	if _, err := in.ExecuteWithContext(lctx, prog); err != nil {
		return nil, runError(err, s, lctx)
	}
	call, err := in.Compile("forge__call()")
	if err != nil {
		return nil, &sandbox.Error{Kind: sandbox.KindInternal, Message: "compile call stub: " + err.Error(), Err: err}
	}
	return &instance{in: in, slot: s, call: call}, nil
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
	{"cannot range over", "range over an integer is not available here: use for i := 0; i < n; i++"},
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
	var pe interp.Panic
	if errors.As(err, &pe) {
		if se, ok := pe.Value.(*sandbox.Error); ok {
			return se
		}
		msg := fmt.Sprint(pe.Value)
		e := &sandbox.Error{Kind: sandbox.KindPanic, Message: "panic: " + msg, Line: lineOf(s.panicPos)}
		if perr, ok := pe.Value.(error); ok {
			e.Err = perr
		}
		return e
	}
	if s.depthHit {
		return &sandbox.Error{Kind: sandbox.KindDepth, Message: fmt.Sprintf("call depth exceeded %d", s.MaxDepth), Hint: depthHint}
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || ctx.Err() != nil {
		e := &sandbox.Error{Kind: sandbox.KindDeadline, Message: "deadline exceeded", Err: err}
		if s.host != nil && s.host.InFlight() {
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

func (p *Program) get(ctx context.Context) (*instance, error) {
	select {
	case inst := <-p.pool:
		return inst, nil
	default:
	}
	select {
	case p.sem <- struct{}{}:
		inst, err := p.newInstance(ctx)
		if err != nil {
			<-p.sem
			return nil, err
		}
		return inst, nil
	case inst := <-p.pool:
		return inst, nil
	case <-ctx.Done():
		return nil, &sandbox.Error{Kind: sandbox.KindDeadline, Message: "deadline exceeded waiting for a free interpreter", Err: ctx.Err()}
	}
}

func (p *Program) put(inst *instance, ok bool) {
	inst.slot.host = nil
	inst.slot.args = nil
	inst.slot.Out, inst.slot.Err, inst.slot.badErr = nil, nil, nil
	if !ok {
		<-p.sem // discard: a stopped or panicked interpreter may still be running native code
		return
	}
	p.pool <- inst
}

// Run calls the program's function with in.Args.
func (s *Sandbox) Run(ctx context.Context, prog sandbox.Program, in sandbox.Input) (sandbox.Output, error) {
	p, ok := prog.(*Program)
	if !ok {
		return sandbox.Output{}, sandbox.Errorf(sandbox.KindInternal, "yaegi: program of type %T is not a yaegi program", prog)
	}
	in.Limits = in.Limits.WithDefaults()
	if in.Limits.Isolation == sandbox.IsolationProcess {
		return s.workers.run(ctx, p, in)
	}
	args, err := OrderArgs(p.sig, in.Args)
	if err != nil {
		return sandbox.Output{}, err
	}
	return p.run(ctx, args, in)
}

func (p *Program) run(ctx context.Context, args []json.RawMessage, in sandbox.Input) (sandbox.Output, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, in.Limits.Timeout)
	defer cancel()
	inst, err := p.get(ctx)
	if err != nil {
		return sandbox.Output{}, err
	}
	host := sandbox.NewHost(ctx, in)
	sl := inst.slot
	sl.host, sl.args, sl.bad, sl.MaxDepth, sl.depthHit, sl.panicPos = host, args, -1, in.Limits.MaxDepth, false, ""
	sl.cancel, sl.done = cancel, make(chan struct{})
	_, xerr := inst.in.ExecuteWithContext(ctx, inst.call)
	close(sl.done)
	var out sandbox.Output
	var rerr error
	keep := true
	switch {
	case xerr != nil:
		rerr = runError(xerr, sl, ctx)
		keep = false
	case sl.bad >= 0:
		prm := p.sig.Params[sl.bad]
		rerr = &sandbox.Error{Kind: sandbox.KindArgs, Param: prm.Name, Message: fmt.Sprintf("want %s: %v", prm.Type, sl.badErr), Err: sl.badErr}
	case sl.depthHit:
		rerr = &sandbox.Error{Kind: sandbox.KindDepth, Message: fmt.Sprintf("call depth exceeded %d (recovered by the code)", sl.MaxDepth)}
	case sl.Err != nil:
		rerr = &sandbox.Error{Kind: sandbox.KindReturned, Message: sl.Err.Error(), Err: sl.Err}
	default:
		out.Value, rerr = encodeResult(p.sig, sl.Out, in.Limits.OutputBytes)
	}
	rerr = host.Finish(&out, rerr)
	out.Duration = time.Since(start)
	p.put(inst, keep)
	if rerr != nil {
		return sandbox.Output{Logs: out.Logs, Duration: out.Duration, HostCalls: out.HostCalls, UpstreamRead: out.UpstreamRead}, rerr
	}
	return out, nil
}

var nullJSON = json.RawMessage("null")

func encodeResult(sig sandbox.Signature, v any, maxBytes int) (json.RawMessage, error) {
	if sig.Shape == sandbox.ResultNone || sig.Shape == sandbox.ResultError {
		return nullJSON, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, &sandbox.Error{Kind: sandbox.KindResult, Message: fmt.Sprintf("encode %s result: %v", sig.Result, err), Err: err,
			Hint: "return JSON-encodable values (no NaN/Inf, funcs, channels or cyclic pointers)"}
	}
	if len(b) > maxBytes {
		return nil, &sandbox.Error{Kind: sandbox.KindOutput, Message: fmt.Sprintf("result is %d bytes, over the %d-byte cap", len(b), maxBytes)}
	}
	return b, nil
}

// OrderArgs maps JSON args (an object by parameter name, or an array by position) onto the
// signature's parameters; a missing, unknown or extra argument is a KindArgs error naming it.
func OrderArgs(sig sandbox.Signature, raw json.RawMessage) ([]json.RawMessage, error) {
	raw = json.RawMessage(strings.TrimSpace(string(raw)))
	n := len(sig.Params)
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	switch raw[0] {
	case '[':
		var list []json.RawMessage
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, &sandbox.Error{Kind: sandbox.KindArgs, Message: "args: " + err.Error(), Err: err}
		}
		if sig.Variadic && len(list) >= n {
			// F(a, xs ...int) called as [a, x1, x2] or [a, [x1, x2]].
			rest := list[n-1:]
			if len(rest) != 1 || len(rest[0]) == 0 || rest[0][0] != '[' {
				b, _ := json.Marshal(rest)
				list = append(list[:n-1:n-1], b)
			}
		}
		if len(list) > n {
			return nil, &sandbox.Error{Kind: sandbox.KindArgs, Message: fmt.Sprintf("got %d args, %s takes %d", len(list), sig.Func, n)}
		}
		if len(list) < n && !(sig.Variadic && len(list) == n-1) {
			return nil, &sandbox.Error{Kind: sandbox.KindArgs, Param: sig.Params[len(list)].Name, Message: fmt.Sprintf("missing argument (got %d of %d)", len(list), n)}
		}
		return list, nil
	case '{':
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			return nil, &sandbox.Error{Kind: sandbox.KindArgs, Message: "args: " + err.Error(), Err: err}
		}
		list := make([]json.RawMessage, n)
		for i, p := range sig.Params {
			v, ok := obj[p.Name]
			if !ok {
				if sig.Variadic && i == n-1 {
					continue
				}
				return nil, &sandbox.Error{Kind: sandbox.KindArgs, Param: p.Name, Message: fmt.Sprintf("missing argument %s (%s)", p.Name, p.Type)}
			}
			list[i] = v
			delete(obj, p.Name)
		}
		for k := range obj {
			return nil, &sandbox.Error{Kind: sandbox.KindArgs, Param: k, Message: fmt.Sprintf("unknown argument %s; %s takes %s", k, sig.Func, paramList(sig))}
		}
		return list, nil
	}
	if n == 1 {
		return []json.RawMessage{raw}, nil // a bare value for a one-parameter function
	}
	return nil, &sandbox.Error{Kind: sandbox.KindArgs, Message: "args must be a JSON object by parameter name or an array by position"}
}

func paramList(sig sandbox.Signature) string {
	parts := make([]string, len(sig.Params))
	for i, p := range sig.Params {
		parts[i] = p.Name + " " + p.Type
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// Close stops worker processes; pooled interpreters are left to the garbage collector.
func (s *Sandbox) Close() error {
	s.closed.Store(true)
	return s.workers.close()
}

var _ io.Writer = hostWriter{}

// Name is the backend's name in contracts and the corpus ("yaegi").
func (s *Sandbox) Name() string { return "yaegi" }
