package yaegi

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/artifactforge/forge/internal/tailbuf"
	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/gate"
)

// WorkerEnv marks a process started as an isolation worker: a binary that embeds the sandbox
// (the forge CLI, an agent that embeds forge, or a test binary via TestMain) calls
// MaybeServeWorker first thing in main.
const WorkerEnv = "FORGE_SANDBOX_WORKER"

// WorkerPathEnv names the worker binary (a forge CLI) for processes that do not serve workers
// themselves; see WorkerConfig.
const WorkerPathEnv = "FORGE_WORKER"

// Worker environment: the memory cap (bytes) and CPU-seconds rlimit a worker applies to itself.
const (
	workerMemoryEnv = "FORGE_SANDBOX_WORKER_MEMORY"
	workerCPUEnv    = "FORGE_SANDBOX_WORKER_CPU"
)

// workerProtocol is the version of the worker wire protocol: a worker binary from another forge
// version is refused with an error that says so, instead of misunderstood.
const workerProtocol = 2

// exitMemory is the worker's exit code when its memory watchdog trips.
const exitMemory = 3

// DefaultCompileTimeout bounds compiling a program in a worker that greeted (type check,
// interpreter compile and package initializers; the initializers also get the call's Timeout).
const DefaultCompileTimeout = 5 * time.Second

// DefaultGreetTimeout bounds the wait for a started worker's greeting. It is a hang bound, not a
// latency expectation: a worker process on a loaded machine may take seconds to be scheduled and
// reach main, and the only binary that never greets is one that is not a forge worker (a
// misconfiguration, said as such).
const DefaultGreetTimeout = 2 * time.Minute

// WorkerConfig says how isolation-mode workers are started. The worker binary is, in order:
// Command; Path; $FORGE_WORKER; this executable if it serves workers (it called
// MaybeServeWorker, as cmd/forge and test binaries do); `forge` on PATH. With none of them,
// isolation fails with an error that says how to provide one.
type WorkerConfig struct {
	// Command is the worker's full argv (overrides Path).
	Command []string
	// Path is a forge binary to run as "PATH sandbox-worker".
	Path string
	// Env is added to the worker's environment.
	Env []string
	// Max bounds live workers per program and limits (default GOMAXPROCS).
	Max int
	// MaxTotal bounds live workers over all programs (default max(8, 2 x GOMAXPROCS)); idle
	// workers of other programs are stopped to make room.
	MaxTotal int
	// CPUSeconds is the RLIMIT_CPU of each worker (default 600): a worker that used it up dies
	// and is replaced.
	CPUSeconds int
	// CompileTimeout bounds compiling the program in a worker once it greeted (default
	// DefaultCompileTimeout).
	CompileTimeout time.Duration
	// GreetTimeout bounds the wait for a started worker's greeting (default
	// DefaultGreetTimeout): a hang bound for a binary that is not a forge worker.
	GreetTimeout time.Duration
}

// isolatedGate is everything an isolated Compile does in the host: the bounded parse, the
// policy gate and the signature, all from the syntax tree. Type checking, compiling and the
// package initializers happen in the worker.
func isolatedGate(src sandbox.Source) (sandbox.Signature, error) {
	_, f, parsed, err := gateSource(src.Code)
	if err != nil {
		return sandbox.Signature{}, err
	}
	fd, err := sandbox.FindFunc(f, src.Func)
	if err != nil {
		return sandbox.Signature{}, err
	}
	return sandbox.ParseSignature(sandbox.Source{Code: parsed, Func: fd.Name.Name})
}

// compileIsolated gates src in the host and compiles it in a worker of its own, which stays idle
// for the program's first call.
func (s *Sandbox) compileIsolated(ctx context.Context, src sandbox.Source) (*Program, error) {
	sig, err := isolatedGate(src)
	if err != nil {
		return nil, err
	}
	p := &Program{src: src, sum: src.Checksum(), sig: sig, isolated: true, workers: s.workers}
	p.release = s.workers.hold(p.sum, sig.Func, src.Client)
	lim := src.Limits.WithDefaults()
	w, err := s.workers.get(ctx, p, lim, 0)
	if err != nil {
		p.release()
		return nil, err
	}
	s.workers.put(w, true)
	// Once the program is unreachable (and was not closed), its workers only take room.
	runtime.AddCleanup(p, func(release func()) { release() }, p.release)
	return p, nil
}

// worker is one live worker process as the sandbox sees it; it serves one program.
type worker struct {
	key    workerKey
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	msgs   chan workerMsg
	stderr *tailbuf.Buffer // the first and last few KiB of its stderr (a fatal error's reason, then goroutine dumps)
	done   chan struct{}   // closed when the process has exited
	err    error
	idle   time.Time // when it was last put back
	argv0  string
}

// workerKey is what a worker is dedicated to: one program (code and function) of one client
// (sandbox.Source.Client) under one memory cap. Workers are never shared across programs or
// clients, so one role's state never meets another's, nor one client's another's.
type workerKey struct {
	sum, fn, client string
	mem             int64
}

type workerPool struct {
	cfg  WorkerConfig
	mu   sync.Mutex
	idle map[workerKey][]*worker
	live map[workerKey]int
	// refs counts the live programs (code and function) whose calls may run in workers: when
	// the last is closed or collected, their workers are stopped (see hold).
	refs map[progKey]int
	// idleTimeout (Options.IdleTimeout): idle workers of a key beyond the most recently used
	// are stopped after this long (trimIdle, scheduled by put while there are any).
	idleTimeout time.Duration
	trim        *time.Timer
	total       int
	nextID      uint64
	closed      bool
	cond        *sync.Cond
}

func newWorkerPool(cfg WorkerConfig) *workerPool {
	if cfg.Max <= 0 {
		cfg.Max = runtime.GOMAXPROCS(0)
	}
	if cfg.MaxTotal <= 0 {
		cfg.MaxTotal = max(8, 2*runtime.GOMAXPROCS(0))
	}
	cfg.MaxTotal = max(cfg.MaxTotal, cfg.Max)
	if cfg.CPUSeconds <= 0 {
		cfg.CPUSeconds = 600
	}
	if cfg.CompileTimeout <= 0 {
		cfg.CompileTimeout = DefaultCompileTimeout
	}
	if cfg.GreetTimeout <= 0 {
		cfg.GreetTimeout = DefaultGreetTimeout
	}
	p := &workerPool{cfg: cfg, idle: map[workerKey][]*worker{}, live: map[workerKey]int{}, refs: map[progKey]int{}}
	p.cond = sync.NewCond(&p.mu)
	return p
}

// ErrNoWorker is returned (wrapped in a KindInternal *sandbox.Error) when process isolation
// finds no worker binary.
var ErrNoWorker = errors.New("no isolation worker binary")

// command returns the worker's argv (see WorkerConfig for the order).
func (p *workerPool) command() ([]string, error) {
	if len(p.cfg.Command) > 0 {
		return p.cfg.Command, nil
	}
	if p.cfg.Path != "" {
		return []string{p.cfg.Path, "sandbox-worker"}, nil
	}
	if env := os.Getenv(WorkerPathEnv); env != "" {
		return []string{env, "sandbox-worker"}, nil
	}
	if servesWorkers.Load() {
		exe, err := os.Executable()
		if err == nil {
			// The same command line, so that the child reaches MaybeServeWorker the way this
			// process did; WorkerEnv makes it serve.
			return append([]string{exe}, os.Args[1:]...), nil
		}
	}
	if path, err := exec.LookPath("forge"); err == nil {
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
		return []string{path, "sandbox-worker"}, nil
	}
	return nil, fmt.Errorf("%w: process isolation runs each program in a worker process, and this program has none: "+
		"install the forge CLI on PATH (go install github.com/artifactforge/forge/cmd/forge), or set $%s to a forge binary, "+
		"or set yaegi.Options.Worker.Path, or call yaegi.MaybeServeWorker() first thing in main so that this executable serves its own workers",
		ErrNoWorker, WorkerPathEnv)
}

// spawn starts a worker process for key.
func (p *workerPool) spawn(key workerKey) (*worker, error) {
	argv, err := p.command()
	if err != nil {
		return nil, &sandbox.Error{Kind: sandbox.KindInternal, Message: err.Error(), Err: err}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(workerEnviron(os.Environ()), WorkerEnv+"=1", workerMemoryEnv+"="+strconv.FormatInt(key.mem, 10), workerCPUEnv+"="+strconv.Itoa(p.cfg.CPUSeconds))
	cmd.Env = append(cmd.Env, p.cfg.Env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, sandbox.AsError(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, sandbox.AsError(err)
	}
	w := &worker{key: key, cmd: cmd, stdin: stdin, msgs: make(chan workerMsg, 4), stderr: tailbuf.New(4<<10, 4<<10), done: make(chan struct{}), argv0: argv[0]}
	cmd.Stderr = w.stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, &sandbox.Error{Kind: sandbox.KindInternal, Err: err,
			Message: fmt.Sprintf("start isolation worker %s: %v; set $%s or yaegi.Options.Worker.Path to a forge binary", argv[0], err, WorkerPathEnv)}
	}
	go func() {
		dec := json.NewDecoder(bufio.NewReaderSize(stdout, 1<<16))
		for {
			var m workerMsg
			if err := dec.Decode(&m); err != nil {
				break
			}
			w.msgs <- m
		}
		w.err = cmd.Wait()
		close(w.done)
	}()
	// The worker greets with its protocol version first: a binary that is not a worker of this
	// version is the sandbox's problem (internal), never mistaken for the code's slow compile.
	// Its bound is its own (GreetTimeout), not the compile's: the compile's bound measured how
	// soon a loaded machine scheduled a new process, and tripped on a real worker.
	greet := time.NewTimer(p.cfg.GreetTimeout)
	defer greet.Stop()
	select {
	case m := <-w.msgs:
		if m.Op != "hello" {
			m.Version = -1
		}
		if err := w.checkVersion(m); err != nil {
			w.kill()
			return nil, err
		}
		return w, nil
	case <-w.done:
		return nil, p.drained(w, "start", time.Since(start))
	case <-greet.C:
		w.kill()
		return nil, &sandbox.Error{Kind: sandbox.KindInternal, Message: fmt.Sprintf(
			"isolation worker %s did not greet within %v: it is not a forge worker of this version (protocol %d); point $%s at a forge binary built from the same version",
			argv[0], p.cfg.GreetTimeout, workerProtocol, WorkerPathEnv)}
	}
}

// workerEnvKeep are the only variables of this process's environment a worker gets: what the Go
// runtime reads, the zone (the worker gives its guests UTC whatever it is; kept so that a leak of
// the host's zone would show in tests), the temporary directory, and the coverage directory of
// instrumented builds. Provider API keys, FORGE_* settings and tokens, store credentials and
// whatever else this process holds stay with it: a worker runs generated code. WorkerConfig.Env
// adds what a deployment's workers need beyond this.
var workerEnvKeep = []string{"GODEBUG", "GOGC", "GOMAXPROCS", "GOTRACEBACK", "GOCOVERDIR", "TZ", "TMPDIR", "SYSTEMROOT"}

// workerEnviron is the part of parent (KEY=VALUE lines) a worker inherits: workerEnvKeep.
func workerEnviron(parent []string) []string {
	var env []string
	for _, kv := range parent {
		k, _, _ := strings.Cut(kv, "=")
		if slices.Contains(workerEnvKeep, k) {
			env = append(env, kv)
		}
	}
	return env
}

// kill stops a worker that never joined the pool.
func (w *worker) kill() {
	_ = w.stdin.Close()
	_ = w.cmd.Process.Kill()
}

// checkVersion refuses a worker binary that speaks another protocol version.
func (w *worker) checkVersion(m workerMsg) *sandbox.Error {
	if m.Version == workerProtocol {
		return nil
	}
	return &sandbox.Error{Kind: sandbox.KindInternal, Message: fmt.Sprintf(
		"isolation worker %s speaks protocol %d, this forge speaks %d: use a forge binary built from the same version as this program (or call yaegi.MaybeServeWorker in main)", w.argv0, m.Version, workerProtocol)}
}

// start starts a worker for key and compiles the program in it, under the compile bound.
func (p *workerPool) start(ctx context.Context, key workerKey, prog *Program, lim sandbox.Limits) (*worker, error) {
	start := time.Now()
	w, err := p.spawn(key)
	if err != nil {
		return nil, err
	}
	fail := func(err *sandbox.Error) (*worker, error) {
		w.kill()
		return nil, err
	}
	req, _ := json.Marshal(workerMsg{Op: "compile", Code: prog.src.Code, Func: prog.sig.Func, Limits: lim})
	if _, err := w.stdin.Write(append(req, '\n')); err != nil {
		return fail(p.drained(w, "compile", time.Since(start)))
	}
	bound := time.NewTimer(p.cfg.CompileTimeout)
	defer bound.Stop()
	for {
		select {
		case m := <-w.msgs:
			switch {
			case m.Op == "compiled" && m.Error != nil:
				return fail(m.Error)
			case m.Op == "compiled":
				return w, nil
			case m.Op == "result" && m.ID == 0 && m.Error != nil: // the memory watchdog
				return fail(m.Error)
			}
		case <-w.done:
			return fail(p.drained(w, "compile", time.Since(start)))
		case <-bound.C:
			return fail(&sandbox.Error{Kind: sandbox.KindDeadline, Message: fmt.Sprintf(
				"compiling in the isolation worker took longer than %v (worker killed)", p.cfg.CompileTimeout),
				Hint: "package initializers and constant expressions must be cheap: compute large tables at run time"})
		case <-ctx.Done():
			return fail(&sandbox.Error{Kind: sandbox.KindDeadline, Message: "call cancelled while its worker compiled", Err: ctx.Err()})
		}
	}
}

// drained returns the error a dying worker managed to report, or classifies its death.
func (p *workerPool) drained(w *worker, during string, elapsed time.Duration) *sandbox.Error {
	for {
		select {
		case m := <-w.msgs:
			if (m.Op == "result" || m.Op == "compiled") && m.Error != nil {
				return m.Error
			}
			continue
		default:
		}
		return p.died(w, during, elapsed, w.key.mem)
	}
}

// get returns an idle worker for prog under lim, or starts one (which compiles prog). The
// compile bound, not the call's deadline, applies to starting it.
func (p *workerPool) get(ctx context.Context, prog *Program, lim sandbox.Limits, wait time.Duration) (*worker, error) {
	key := workerKey{sum: prog.sum, fn: prog.sig.Func, client: prog.src.Client, mem: lim.MemoryBytes}
	return p.acquire(ctx, key, wait, func() (*worker, error) { return p.start(ctx, key, prog, lim) })
}

// acquire returns an idle worker for key or one from start, within the pool's bounds; it waits
// at most wait for a busy worker to come back (0: as long as ctx lets it).
func (p *workerPool) acquire(ctx context.Context, key workerKey, wait time.Duration, start func() (*worker, error)) (*worker, error) {
	if wait > 0 {
		// Only the wait: start (bound to its caller's context) has the compile bound.
		waitCtx, cancel := context.WithTimeout(ctx, wait)
		defer cancel()
		ctx = waitCtx
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		if p.closed {
			return nil, sandbox.Errorf(sandbox.KindInternal, "sandbox closed")
		}
		if n := len(p.idle[key]); n > 0 {
			w := p.idle[key][n-1]
			p.idle[key] = p.idle[key][:n-1]
			select {
			case <-w.done:
				p.forget(w) // died while idle
				continue
			default:
			}
			return w, nil
		}
		// A delegated call (depth > 0) never waits: its ancestors may hold every worker while
		// they wait for it. It starts one beyond the limits, which put retires.
		if (p.live[key] < p.cfg.Max && (p.total < p.cfg.MaxTotal || p.evictIdle())) || sandbox.CallDepth(ctx) > 0 {
			p.live[key]++
			p.total++
			p.mu.Unlock()
			w, err := start()
			p.mu.Lock()
			if err != nil {
				p.live[key]--
				p.total--
				p.cond.Broadcast()
				return nil, err
			}
			return w, nil
		}
		if ctx.Err() != nil {
			return nil, &sandbox.Error{Kind: sandbox.KindCapacity, Message: "no free worker within the deadline (all busy with other calls): retry later, or raise the pool size", Err: ctx.Err()}
		}
		stop := context.AfterFunc(ctx, func() { p.mu.Lock(); p.cond.Broadcast(); p.mu.Unlock() })
		p.cond.Wait()
		stop()
	}
}

// evictIdle stops the longest-idle worker of any program to make room (p.mu held).
func (p *workerPool) evictIdle() bool {
	var oldest *worker
	for _, ws := range p.idle {
		for _, w := range ws {
			if oldest == nil || w.idle.Before(oldest.idle) {
				oldest = w
			}
		}
	}
	if oldest == nil {
		return false
	}
	ws := p.idle[oldest.key]
	for i, w := range ws {
		if w == oldest {
			p.idle[oldest.key] = append(ws[:i:i], ws[i+1:]...)
			break
		}
	}
	if len(p.idle[oldest.key]) == 0 {
		delete(p.idle, oldest.key)
	}
	p.stop(oldest)
	return true
}

// progKey is a program as its workers know it: code, function and client, any memory cap.
type progKey struct{ sum, fn, client string }

// hold records a live program of code sum and function fn, and returns its release, which
// stops the program's workers (idle ones now, busy ones when their call returns) once no
// other live program of the same code holds them. Calling release again does nothing.
func (p *workerPool) hold(sum, fn, client string) (release func()) {
	k := progKey{sum, fn, client}
	p.mu.Lock()
	p.refs[k]++
	p.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			p.refs[k]--
			last := p.refs[k] <= 0
			if last {
				delete(p.refs, k)
			}
			p.mu.Unlock()
			if last {
				p.drop(k)
			}
		})
	}
}

// drop stops the idle workers of a program (any memory cap).
func (p *workerPool) drop(k progKey) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for key, ws := range p.idle {
		if key.sum == k.sum && key.fn == k.fn && key.client == k.client {
			for _, w := range ws {
				p.stop(w)
			}
			delete(p.idle, key)
		}
	}
	p.cond.Broadcast()
}

// forget drops a worker from the counts (p.mu held).
func (p *workerPool) forget(w *worker) {
	p.live[w.key]--
	if p.live[w.key] <= 0 {
		delete(p.live, w.key)
	}
	p.total--
}

// stop kills a worker and drops it from the counts (p.mu held).
func (p *workerPool) stop(w *worker) {
	_ = w.stdin.Close()
	_ = w.cmd.Process.Kill()
	p.forget(w)
}

func (p *workerPool) put(w *worker, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	held := p.refs[progKey{w.key.sum, w.key.fn, w.key.client}] > 0 // else its program was closed or collected
	if ok && held && !p.closed && p.live[w.key] <= p.cfg.Max && p.total <= p.cfg.MaxTotal {
		w.idle = time.Now()
		p.idle[w.key] = append(p.idle[w.key], w)
		if len(p.idle[w.key]) > 1 && p.idleTimeout > 0 && p.trim == nil {
			p.trim = time.AfterFunc(p.idleTimeout, p.trimIdle)
		}
	} else {
		p.stop(w)
	}
	p.cond.Broadcast()
}

// grace is how long past the call's deadline the sandbox waits for a worker's own report before
// killing it (the worker stops its call at the deadline itself; this catches one stuck in
// native code).
const grace = 50 * time.Millisecond

func (p *workerPool) run(ctx context.Context, prog *Program, in sandbox.Input) (sandbox.Output, error) {
	args, err := sandbox.OrderArgs(prog.sig, in.Args)
	if err != nil {
		return sandbox.Output{}, err
	}
	w, err := p.get(ctx, prog, in.Limits, in.Limits.Timeout)
	if err != nil {
		return sandbox.Output{}, err
	}
	start := time.Now()
	m, e := p.exchange(ctx, w, workerMsg{Op: "run", Args: args, Caps: in.Caps, Limits: in.Limits, Depth: sandbox.CallDepth(ctx), Replay: in.Replay}, in, in.Limits.Timeout+grace)
	if e != nil {
		p.put(w, false)
		return sandbox.Output{Duration: time.Since(start)}, e
	}
	out := sandbox.Output{Value: m.Value, Logs: m.Logs, HostCalls: m.HostCalls, UpstreamRead: m.UpstreamRead, Duration: time.Since(start)}
	if m.Error != nil {
		// A worker whose call stopped at a deadline may still be running it: replace it.
		keep := m.Error.Kind != sandbox.KindDeadline && m.Error.Kind != sandbox.KindMemory && m.Error.Kind != sandbox.KindDepth && m.ID != 0
		p.put(w, keep)
		return out, m.Error
	}
	p.put(w, true)
	return out, nil
}

// exchange sends req to w and serves the worker's host calls until its answer (a result, or the
// outcome of a test suite), its death or the bound. An error means the worker must be dropped.
func (p *workerPool) exchange(ctx context.Context, w *worker, req workerMsg, in sandbox.Input, bound time.Duration) (workerMsg, *sandbox.Error) {
	start := time.Now()
	during := req.Op
	wctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	p.mu.Lock()
	p.nextID++
	req.ID = p.nextID
	p.mu.Unlock()
	b, _ := json.Marshal(req)
	if _, err := w.stdin.Write(append(b, '\n')); err != nil {
		return workerMsg{}, p.drained(w, during, time.Since(start))
	}
	for {
		select {
		case m := <-w.msgs:
			switch {
			case m.Op == "call":
				reply := workerMsg{Op: "call_result", ID: m.ID}
				if in.Call == nil || !in.Caps.Call {
					reply.Error = sandbox.Errorf(sandbox.KindPolicy, "host.Call not granted")
				} else if v, err := in.Call(sandbox.WithCallDepth(ctx, m.Depth), m.Role, m.Method, m.Value); err != nil {
					reply.Error = sandbox.AsError(err)
				} else {
					reply.Value = v
				}
				rb, _ := json.Marshal(reply)
				_, _ = w.stdin.Write(append(rb, '\n'))
			case m.Op == "result" && m.ID == 0 && req.Op != "run":
				return workerMsg{}, m.Error // the memory watchdog, during a test suite
			case (m.Op == "result" || m.Op == "tested") && (m.ID == req.ID || m.ID == 0):
				return m, nil
			}
		case <-w.done:
			return workerMsg{}, p.drained(w, during, time.Since(start))
		case <-wctx.Done():
			e := &sandbox.Error{Kind: sandbox.KindDeadline, Message: "deadline exceeded (worker killed)", Err: wctx.Err()}
			if ctx.Err() != nil && errors.Is(ctx.Err(), context.Canceled) {
				e.Message = "call cancelled (worker killed)"
			}
			return workerMsg{}, e
		}
	}
}

// testIsolated runs an acceptance test suite in a worker of its own, discarded afterwards: the
// host parses and gates both files; the worker type-checks, compiles, initializes and runs them.
// The bound is the compile bound plus each test's deadline (and a second) per test.
func (s *Sandbox) testIsolated(ctx context.Context, src sandbox.Source, testCode string, in sandbox.Input) ([]sandbox.TestResult, error) {
	names, err := isolatedTestGate(src, testCode)
	if err != nil {
		return nil, err
	}
	lim := in.Limits
	key := workerKey{sum: "test:" + sandbox.Source{Code: src.Code + "\x00" + testCode}.Checksum(), fn: src.Func, mem: lim.MemoryBytes}
	p := s.workers
	w, err := p.acquire(ctx, key, 0, func() (*worker, error) { return p.spawn(key) })
	if err != nil {
		return nil, err
	}
	defer p.put(w, false)
	bound := p.cfg.CompileTimeout + time.Duration(len(names))*(lim.Timeout+time.Second)
	m, e := p.exchange(ctx, w, workerMsg{Op: "test", Code: src.Code, Func: src.Func, Tests: testCode, Caps: in.Caps, Limits: lim, Depth: sandbox.CallDepth(ctx)}, in, bound)
	if e != nil {
		return nil, e
	}
	if m.Error != nil {
		return nil, m.Error
	}
	if m.Results == nil {
		m.Results = []sandbox.TestResult{}
	}
	return m.Results, nil
}

// isolatedTestGate is the host's part of an isolated test run: the bounded parse and the policy
// gate of the artifact and the tests; it returns the test names.
func isolatedTestGate(src sandbox.Source, testCode string) ([]string, error) {
	fset, f, _, err := gateSource(src.Code)
	if err != nil {
		return nil, err
	}
	tf, _, err := gateTestFile(fset, f, testCode)
	if err != nil {
		return nil, gate.InTests(err)
	}
	return sandbox.TestNames(tf), nil
}

// trimIdle stops the idle workers of each key that have been idle for idleTimeout, but the most
// recently used one (acquire takes the last one put back, so the others stay idle when the load
// drops), and runs again while any key has more than one idle worker.
func (p *workerPool) trimIdle() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.trim = nil
	if p.closed {
		return
	}
	now := time.Now()
	next := time.Duration(-1)
	for key, ws := range p.idle {
		kept := ws[:0]
		for i, w := range ws {
			if i < len(ws)-1 && now.Sub(w.idle) >= p.idleTimeout {
				p.stop(w)
				continue
			}
			kept = append(kept, w)
		}
		clear(ws[len(kept):])
		p.idle[key] = kept
		if len(kept) > 1 {
			if d := p.idleTimeout - now.Sub(kept[0].idle); next < 0 || d < next {
				next = d
			}
		}
	}
	if next >= 0 {
		p.trim = time.AfterFunc(max(next, time.Millisecond), p.trimIdle)
	}
	p.cond.Broadcast()
}

func (p *workerPool) close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	if p.trim != nil {
		p.trim.Stop()
	}
	for _, ws := range p.idle {
		for _, w := range ws {
			p.stop(w)
		}
	}
	p.idle = map[workerKey][]*worker{}
	p.cond.Broadcast()
	return nil
}
