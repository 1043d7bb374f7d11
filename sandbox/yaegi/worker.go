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
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/artifactforge/forge/sandbox"
)

// WorkerEnv marks a process started as an isolation worker: a binary that embeds the sandbox
// (the forge CLI, or a test binary via TestMain) calls MaybeServeWorker first thing in main.
const WorkerEnv = "FORGE_SANDBOX_WORKER"

// Worker environment: the memory cap (bytes) and CPU-seconds rlimit a worker applies to itself.
const (
	workerMemoryEnv = "FORGE_SANDBOX_WORKER_MEMORY"
	workerCPUEnv    = "FORGE_SANDBOX_WORKER_CPU"
)

// exitMemory is the worker's exit code when its memory watchdog trips.
const exitMemory = 3

// WorkerConfig says how isolation-mode workers are started.
type WorkerConfig struct {
	// Command is the worker's argv (default: this executable with "sandbox-worker").
	Command []string
	// Env is added to the worker's environment.
	Env []string
	// Max bounds live workers per memory limit (default GOMAXPROCS).
	Max int
	// CPUSeconds is the RLIMIT_CPU of each worker (default 600): a worker that used it up dies
	// and is replaced.
	CPUSeconds int
}

// wire messages between the sandbox and a worker (JSON lines).
type workerMsg struct {
	Op string `json:"op"` // run | result | call | call_result
	ID uint64 `json:"id"`
	// run
	Code   string               `json:"code,omitempty"`
	Func   string               `json:"func,omitempty"`
	Args   []json.RawMessage    `json:"args,omitempty"`
	Caps   sandbox.Capabilities `json:"caps,omitempty"`
	Limits sandbox.Limits       `json:"limits,omitempty"`
	Depth  int                  `json:"depth,omitempty"`
	// result / call_result
	Value        json.RawMessage `json:"value,omitempty"`
	Logs         []string        `json:"logs,omitempty"`
	HostCalls    int             `json:"host_calls,omitempty"`
	UpstreamRead bool            `json:"upstream_read,omitempty"`
	Error        *sandbox.Error  `json:"error,omitempty"`
	// call
	Role   string `json:"role,omitempty"`
	Method string `json:"method,omitempty"`
}

// MaybeServeWorker turns this process into an isolation worker when WorkerEnv is set, serving
// stdin/stdout until stdin closes, then exits. Otherwise it returns at once.
func MaybeServeWorker() {
	if os.Getenv(WorkerEnv) == "" {
		return
	}
	if err := ServeWorker(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "sandbox-worker:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// ServeWorker is the worker side of isolation mode: it applies its rlimits, then compiles and runs
// what it is sent with an in-process yaegi sandbox, forwarding host Call delegation back.
func ServeWorker(r io.Reader, w io.Writer) error {
	memLimit, _ := strconv.ParseInt(os.Getenv(workerMemoryEnv), 10, 64)
	cpu, _ := strconv.Atoi(os.Getenv(workerCPUEnv))
	if err := applyRlimits(memLimit, cpu); err != nil {
		return err
	}
	if memLimit > 0 {
		debug.SetMemoryLimit(memLimit)
		go memoryWatchdog(memLimit, w)
	}
	sb := New(Options{PoolSize: 1})
	progs := map[string]*Program{}
	var wmu sync.Mutex
	enc := json.NewEncoder(w)
	send := func(m workerMsg) {
		wmu.Lock()
		defer wmu.Unlock()
		_ = enc.Encode(m)
	}
	workerSend.Store(&send)
	var pmu sync.Mutex
	pending := map[uint64]chan workerMsg{}
	var nextCall uint64 = 1 << 32
	runs := make(chan workerMsg, 1)
	go func() {
		defer close(runs)
		dec := json.NewDecoder(bufio.NewReaderSize(r, 1<<16))
		for {
			var m workerMsg
			if err := dec.Decode(&m); err != nil {
				return
			}
			switch m.Op {
			case "run":
				runs <- m
			case "call_result":
				pmu.Lock()
				ch := pending[m.ID]
				delete(pending, m.ID)
				pmu.Unlock()
				if ch != nil {
					ch <- m
				}
			}
		}
	}()
	for m := range runs {
		res := workerMsg{Op: "result", ID: m.ID}
		src := sandbox.Source{Code: m.Code, Func: m.Func}
		key := src.Checksum() + "\x00" + m.Func
		p := progs[key]
		if p == nil {
			cp, err := sb.Compile(context.Background(), src)
			if err != nil {
				res.Error = sandbox.AsError(err)
				send(res)
				continue
			}
			p = cp.(*Program)
			progs[key] = p
		}
		in := sandbox.Input{Caps: m.Caps, Limits: m.Limits}
		in.Limits.Isolation = ""
		in.Call = func(ctx context.Context, role, method string, args json.RawMessage) (json.RawMessage, error) {
			pmu.Lock()
			nextCall++
			id := nextCall
			ch := make(chan workerMsg, 1)
			pending[id] = ch
			pmu.Unlock()
			send(workerMsg{Op: "call", ID: id, Role: role, Method: method, Value: args, Depth: sandbox.CallDepth(ctx)})
			select {
			case reply := <-ch:
				if reply.Error != nil {
					return nil, reply.Error
				}
				return reply.Value, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		ctx := sandbox.WithCallDepth(context.Background(), m.Depth)
		workerBusy.Store(true)
		out, err := p.run(ctx, nil, m.Args, in)
		workerBusy.Store(false)
		res.Value, res.Logs, res.HostCalls, res.UpstreamRead = out.Value, out.Logs, out.HostCalls, out.UpstreamRead
		if err != nil {
			res.Error = sandbox.AsError(err)
		}
		send(res)
	}
	return nil
}

// workerBusy is set while the worker runs a call: the watchdog samples only then.
var workerBusy atomic.Bool

// workerSend lets the memory watchdog report on the worker's (serialized) stdout.
var workerSend atomic.Pointer[func(workerMsg)]

func vmSize() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 2 << 30
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmSize:") {
			f := strings.Fields(l)
			if len(f) >= 2 {
				n, _ := strconv.ParseInt(f[1], 10, 64)
				return n << 10
			}
		}
	}
	return 2 << 30
}

// memoryWatchdog exits the worker with a classified memory error when the Go heap passes the
// cap: the sandbox hears a memory error instead of an anonymous crash.
func memoryWatchdog(limit int64, w io.Writer) {
	samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"}}
	for {
		time.Sleep(2 * time.Millisecond)
		if !workerBusy.Load() {
			continue
		}
		metrics.Read(samples)
		used := int64(samples[0].Value.Uint64() + samples[1].Value.Uint64())
		if used > limit {
			if send := workerSend.Load(); send != nil {
				(*send)(workerMsg{Op: "result", ID: 0, Error: &sandbox.Error{Kind: sandbox.KindMemory,
					Message: fmt.Sprintf("memory cap exceeded: heap %d MiB > %d MiB", used>>20, limit>>20)}})
			}
			os.Exit(exitMemory)
		}
	}
}

// worker is one live worker process as the sandbox sees it.
type worker struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	msgs   chan workerMsg
	stderr *tailBuffer
	done   chan struct{} // closed when the process has exited
	err    error
}

// tailBuffer keeps the first and last few KiB a worker wrote to stderr (a fatal error's reason
// comes first, then goroutine dumps), to classify its death.
type tailBuffer struct {
	mu   sync.Mutex
	head []byte
	buf  []byte
}

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n := 4096 - len(t.head); n > 0 {
		t.head = append(t.head, b[:min(n, len(b))]...)
	}
	t.buf = append(t.buf, b...)
	if len(t.buf) > 4096 {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-4096:]...)
	}
	return len(b), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.head) + "\n...\n" + string(t.buf)
}

type workerPool struct {
	cfg    WorkerConfig
	mu     sync.Mutex
	idle   map[int64][]*worker
	live   map[int64]int
	nextID uint64
	closed bool
	cond   *sync.Cond
}

func newWorkerPool(cfg WorkerConfig) *workerPool {
	if cfg.Max <= 0 {
		cfg.Max = runtime.GOMAXPROCS(0)
	}
	if cfg.CPUSeconds <= 0 {
		cfg.CPUSeconds = 600
	}
	p := &workerPool{cfg: cfg, idle: map[int64][]*worker{}, live: map[int64]int{}}
	p.cond = sync.NewCond(&p.mu)
	return p
}

func (p *workerPool) start(mem int64) (*worker, error) {
	argv := p.cfg.Command
	if len(argv) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("find executable: %w", err)
		}
		argv = []string{exe, "sandbox-worker"}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), WorkerEnv+"=1", workerMemoryEnv+"="+strconv.FormatInt(mem, 10), workerCPUEnv+"="+strconv.Itoa(p.cfg.CPUSeconds))
	cmd.Env = append(cmd.Env, p.cfg.Env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	w := &worker{cmd: cmd, stdin: stdin, msgs: make(chan workerMsg, 4), stderr: &tailBuffer{}, done: make(chan struct{})}
	cmd.Stderr = w.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start worker %s: %w", argv[0], err)
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
	return w, nil
}

func (p *workerPool) get(ctx context.Context, mem int64) (*worker, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		if p.closed {
			return nil, sandbox.Errorf(sandbox.KindInternal, "sandbox closed")
		}
		if n := len(p.idle[mem]); n > 0 {
			w := p.idle[mem][n-1]
			p.idle[mem] = p.idle[mem][:n-1]
			select {
			case <-w.done:
				p.live[mem]--
				continue // died while idle
			default:
			}
			return w, nil
		}
		if p.live[mem] < p.cfg.Max {
			p.live[mem]++
			p.mu.Unlock()
			w, err := p.start(mem)
			p.mu.Lock()
			if err != nil {
				p.live[mem]--
				return nil, &sandbox.Error{Kind: sandbox.KindInternal, Message: err.Error(), Err: err}
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

func (p *workerPool) put(mem int64, w *worker, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ok && !p.closed {
		p.idle[mem] = append(p.idle[mem], w)
	} else {
		p.live[mem]--
		_ = w.stdin.Close()
		_ = w.cmd.Process.Kill()
	}
	p.cond.Broadcast()
}

// grace is how long past the call's deadline the sandbox waits for a worker before killing it.
const grace = 250 * time.Millisecond

func (p *workerPool) run(ctx context.Context, prog *Program, in sandbox.Input) (sandbox.Output, error) {
	start := time.Now()
	args, err := sandbox.OrderArgs(prog.sig, in.Args)
	if err != nil {
		return sandbox.Output{}, err
	}
	mem := in.Limits.MemoryBytes
	wctx, cancel := context.WithTimeout(ctx, in.Limits.Timeout+grace)
	defer cancel()
	w, err := p.get(wctx, mem)
	if err != nil {
		return sandbox.Output{}, err
	}
	p.mu.Lock()
	p.nextID++
	id := p.nextID
	p.mu.Unlock()
	req := workerMsg{Op: "run", ID: id, Code: prog.src.Code, Func: prog.sig.Func, Args: args, Caps: in.Caps, Limits: in.Limits, Depth: sandbox.CallDepth(ctx)}
	b, _ := json.Marshal(req)
	if _, err := w.stdin.Write(append(b, '\n')); err != nil {
		p.put(mem, w, false)
		return sandbox.Output{}, p.died(w, "send request", time.Since(start))
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
			case m.Op == "result" && (m.ID == id || m.ID == 0):
				out := sandbox.Output{Value: m.Value, Logs: m.Logs, HostCalls: m.HostCalls, UpstreamRead: m.UpstreamRead, Duration: time.Since(start)}
				if m.Error != nil {
					// A worker whose call stopped at a deadline may still be running it: replace it.
					keep := m.Error.Kind != sandbox.KindDeadline && m.Error.Kind != sandbox.KindMemory && m.Error.Kind != sandbox.KindDepth && m.ID != 0
					p.put(mem, w, keep)
					return out, m.Error
				}
				p.put(mem, w, true)
				return out, nil
			}
		case <-w.done:
			// Drain a result the worker managed to write before dying.
			select {
			case m := <-w.msgs:
				if m.Op == "result" && m.Error != nil {
					p.put(mem, w, false)
					return sandbox.Output{Duration: time.Since(start)}, m.Error
				}
			default:
			}
			p.put(mem, w, false)
			return sandbox.Output{Duration: time.Since(start)}, p.died(w, "run", time.Since(start))
		case <-wctx.Done():
			p.put(mem, w, false)
			return sandbox.Output{Duration: time.Since(start)}, &sandbox.Error{Kind: sandbox.KindDeadline, Message: "deadline exceeded (worker killed)", Err: wctx.Err()}
		}
	}
}

// died classifies a worker's death from its exit status and the tail of its stderr.
func (p *workerPool) died(w *worker, during string, elapsed time.Duration) *sandbox.Error {
	<-w.done
	tail := w.stderr.String()
	var ee *exec.ExitError
	code := -1
	if errors.As(w.err, &ee) {
		code = ee.ExitCode()
	}
	last := strings.TrimSpace(tail)
	if i := strings.Index(last, "fatal error:"); i >= 0 {
		last = last[i:]
	}
	if j := strings.IndexByte(last, '\n'); j > 0 {
		last = last[:j]
	}
	msg := fmt.Sprintf("worker died during %s after %v (exit %d): %s", during, elapsed.Round(time.Millisecond), code, last)
	switch {
	case code == exitMemory || strings.Contains(tail, "out of memory") || strings.Contains(tail, "cannot allocate memory") ||
		strings.Contains(tail, "failed to allocate"): // the last one: the race detector's allocator under RLIMIT_AS
		return &sandbox.Error{Kind: sandbox.KindMemory, Message: msg}
	case strings.Contains(tail, "stack overflow") || strings.Contains(tail, "stack exceeds"):
		return &sandbox.Error{Kind: sandbox.KindDepth, Message: msg}
	case strings.Contains(tail, "CPU time limit") || (ee != nil && ee.Sys() != nil && strings.Contains(fmt.Sprint(ee.Sys()), "cpu")):
		return &sandbox.Error{Kind: sandbox.KindDeadline, Message: msg}
	}
	return &sandbox.Error{Kind: sandbox.KindInternal, Message: msg}
}

func (p *workerPool) close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for mem, ws := range p.idle {
		for _, w := range ws {
			_ = w.stdin.Close()
			_ = w.cmd.Process.Kill()
			p.live[mem]--
		}
	}
	p.idle = map[int64][]*worker{}
	p.cond.Broadcast()
	return nil
}
