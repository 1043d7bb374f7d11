package yaegi

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/yaegi/symbols"
)

// The worker side of process isolation: the wire protocol and the loop a worker process runs
// (MaybeServeWorker, ServeWorker), under its own memory watchdog.

// wire messages between the sandbox and a worker (JSON lines).
type workerMsg struct {
	Op string `json:"op"` // hello | compile | compiled | run | result | test | tested | call | call_result
	ID uint64 `json:"id"`
	// compile
	Code string `json:"code,omitempty"`
	Func string `json:"func,omitempty"`
	// compiled
	Version int `json:"version,omitempty"`
	// test / tested
	Tests   string               `json:"tests,omitempty"`
	Results []sandbox.TestResult `json:"results,omitempty"`
	// run
	Args   []json.RawMessage    `json:"args,omitempty"`
	Caps   sandbox.Capabilities `json:"caps,omitempty"`
	Limits sandbox.Limits       `json:"limits,omitempty"`
	Depth  int                  `json:"depth,omitempty"`
	Replay bool                 `json:"replay,omitempty"` // sandbox.Input.Replay
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

// servesWorkers is set once MaybeServeWorker has run in this process: the executable can then
// be its own worker.
var servesWorkers atomic.Bool

// MaybeServeWorker turns this process into an isolation worker when WorkerEnv is set, serving
// stdin/stdout until stdin closes, then exits. Otherwise it returns at once, and records that
// this executable can serve as its own worker.
//
// An agent that embeds forge calls it first thing in main, before flags or other work:
//
//	func main() {
//		yaegi.MaybeServeWorker()
//		...
//	}
//
// and gets process isolation with no further plumbing (without it, the worker is a forge binary:
// see WorkerConfig).
func MaybeServeWorker() {
	if os.Getenv(WorkerEnv) == "" {
		servesWorkers.Store(true)
		return
	}
	if err := ServeWorker(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "sandbox-worker:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// ServeWorker is the worker side of isolation mode: it applies its rlimits, then compiles the
// one program it is sent with an in-process yaegi sandbox (type check, compile, initializers)
// and runs its calls, forwarding host Call delegation back. A worker serves one program only.
func ServeWorker(r io.Reader, w io.Writer) error {
	// The worker's process is the sandbox's own: its local zone is the guest's (UTC, named
	// "Local", as under wasm), so that nothing the program runs can read the host's zone.
	time.Local = symbols.GuestLocal
	memLimit, _ := strconv.ParseInt(os.Getenv(workerMemoryEnv), 10, 64)
	cpu, _ := strconv.Atoi(os.Getenv(workerCPUEnv))
	if err := applyRlimits(memLimit, cpu); err != nil {
		return err
	}
	if memLimit > 0 {
		debug.SetMemoryLimit(memLimit)
		// A goroutine stack may use half the cap: recursion through native code (which no depth
		// guard sees) then ends in the runtime's "stack overflow", reported as a depth error,
		// rather than in an out-of-memory death a second later.
		debug.SetMaxStack(int(max(memLimit/2, 32<<20)))
		go memoryWatchdog(memLimit, w)
	}
	sb := New(Options{PoolSize: 1})
	var prog *Program
	var wmu sync.Mutex
	enc := json.NewEncoder(w)
	send := func(m workerMsg) {
		clipMsg(&m)
		wmu.Lock()
		defer wmu.Unlock()
		_ = enc.Encode(m)
	}
	workerSend.Store(&send)
	send(workerMsg{Op: "hello", Version: workerProtocol})
	var pmu sync.Mutex
	pending := map[uint64]chan workerMsg{}
	var nextCall uint64 = 1 << 32
	reqs := make(chan workerMsg, 1)
	go func() {
		defer close(reqs)
		dec := json.NewDecoder(bufio.NewReaderSize(r, 1<<16))
		for {
			var m workerMsg
			if err := dec.Decode(&m); err != nil {
				return
			}
			switch m.Op {
			case "compile", "run", "test":
				reqs <- m
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
	// call is host Call delegation: forwarded to the sandbox, which runs the nested call.
	call := func(ctx context.Context, role, method string, args json.RawMessage) (json.RawMessage, error) {
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
	for m := range reqs {
		if m.Op == "test" {
			// A test worker runs one suite and is discarded.
			in := sandbox.Input{Caps: m.Caps, Limits: m.Limits, Call: call}
			in.Limits.Isolation = ""
			workerBusy.Store(true)
			results, err := sb.Test(sandbox.WithCallDepth(context.Background(), m.Depth), sandbox.Source{Code: m.Code, Func: m.Func}, m.Tests, in)
			workerBusy.Store(false)
			res := workerMsg{Op: "tested", ID: m.ID, Version: workerProtocol, Results: results}
			if err != nil {
				res.Error = sandbox.AsError(err)
			}
			send(res)
			continue
		}
		if m.Op == "compile" {
			res := workerMsg{Op: "compiled", ID: m.ID, Version: workerProtocol}
			if prog != nil {
				res.Error = sandbox.Errorf(sandbox.KindInternal, "worker already serves a program")
				send(res)
				continue
			}
			// Initializers run under the call's deadline (Compile bounds them by the default
			// deadline as well).
			ctx, cancel := context.WithTimeout(context.Background(), m.Limits.WithDefaults().Timeout)
			workerBusy.Store(true)
			cp, err := sb.Compile(ctx, sandbox.Source{Code: m.Code, Func: m.Func})
			workerBusy.Store(false)
			cancel()
			if err != nil {
				res.Error = sandbox.AsError(err)
			} else {
				prog = cp.(*Program)
			}
			send(res)
			continue
		}
		res := workerMsg{Op: "result", ID: m.ID}
		if prog == nil {
			res.Error = sandbox.Errorf(sandbox.KindInternal, "worker got a call before a program")
			send(res)
			continue
		}
		in := sandbox.Input{Caps: m.Caps, Limits: m.Limits, Call: call, Replay: m.Replay}
		in.Limits.Isolation = ""
		ctx := sandbox.WithCallDepth(context.Background(), m.Depth)
		workerBusy.Store(true)
		out, err := prog.run(ctx, nil, m.Args, in)
		workerBusy.Store(false)
		res.Value, res.Logs, res.HostCalls, res.UpstreamRead = out.Value, out.Logs, out.HostCalls, out.UpstreamRead
		if err != nil {
			res.Error = sandbox.AsError(err)
		}
		send(res)
	}
	return nil
}

// maxErrorText bounds the guest-made text a worker sends the host in an error or a test result
// (a panic value, an error's text, an assertion message): the host decodes every line it gets, so
// unbounded guest text would be a memory bomb aimed at the host through the pipe. Values and logs
// are already bounded by Limits.OutputBytes.
const maxErrorText = 16 << 10

// clip bounds one guest-made text.
func clip(s string) string {
	if len(s) <= maxErrorText {
		return s
	}
	return s[:maxErrorText] + fmt.Sprintf("... (%d more bytes cut)", len(s)-maxErrorText)
}

// clipMsg bounds the guest-made texts of an outgoing message.
func clipMsg(m *workerMsg) {
	if m.Error != nil && (len(m.Error.Message) > maxErrorText || len(m.Error.Hint) > maxErrorText) {
		e := *m.Error
		e.Message, e.Hint = clip(e.Message), clip(e.Hint)
		m.Error = &e
	}
	for i := range m.Results {
		m.Results[i].Name, m.Results[i].Message = clip(m.Results[i].Name), clip(m.Results[i].Message)
	}
}

// workerBusy is set while the worker compiles or runs a call: the watchdog samples only then.
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
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	for {
		time.Sleep(2 * time.Millisecond)
		if !workerBusy.Load() {
			continue
		}
		metrics.Read(samples)
		used := int64(samples[0].Value.Uint64() + samples[1].Value.Uint64())
		if used > limit {
			// The heap counts garbage not yet collected: a loop that only makes garbage can run
			// ahead of a collector starved of CPU. Only what survives a full collection is the
			// code's memory.
			runtime.GC()
			metrics.Read(live)
			used = int64(live[0].Value.Uint64())
		}
		if used > limit {
			if send := workerSend.Load(); send != nil {
				(*send)(workerMsg{Op: "result", ID: 0, Error: &sandbox.Error{Kind: sandbox.KindMemory,
					Message: fmt.Sprintf("memory cap exceeded: heap %d MiB > %d MiB", used>>20, limit>>20)}})
			}
			os.Exit(exitMemory)
		}
	}
}
