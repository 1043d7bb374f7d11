package native

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/artifactforge/forge/internal/tailbuf"
	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/internal/guestgen"
)

// worker is one worker process of a program: requests on its stdin, frames from its fd 3, what
// its runtime reports (a panic, a fatal error) on stderr, a test run's report on its fd 4 (apart
// from its stdout, where the artifact prints: a printed verdict line is not the test's verdict).
type worker struct {
	mem     int64 // its memory cap (bytes)
	cmd     *exec.Cmd
	req     *os.File      // our end of its fd 0
	frames  *bufio.Reader // our end of its fd 3
	framesF *os.File

	stderr   *tailbuf.Buffer // the start and end of what it wrote on stderr since its call began
	errMu    sync.Mutex      // held while bytes are out of the stderr pipe but not yet in stderr
	errR     syscall.RawConn // our end of its stderr (non-blocking, through the poller)
	errOnce  sync.Once
	errRead  []byte           // see errBuf
	drain    func(fd uintptr) // newCall's, under errMu
	killFn   func()           // w.kill, made once (a method value per call is an allocation)
	drained  sync.WaitGroup   // the stderr, stdout and report readers
	exited   chan struct{}    // closed once the process is reaped
	killed   atomic.Bool      // we killed it (a deadline, a cancellation)
	inFlight atomic.Bool      // a host request was being served when it was killed
	broken   bool             // it must not serve another call
	logMu    sync.Mutex
	logHost  *sandbox.Host // the call (or test run) its stdout goes to
	capture  *capBuffer    // while tests run, their report (fd 4)
	logEnd   chan struct{} // an end-of-output mark was read
	marks    atomic.Int64  // end-of-output marks read
	calls    int64         // calls sent with logs (each ends with a mark)
	logDead  chan struct{} // closed when the stdout reader stops reading lines
	sendBuf  []byte

	// The marks it writes around a call with logs, with a token of its own the artifact cannot
	// read (it reads it from its stdin in the lockdown, before any artifact code runs): a printed
	// copy of a mark is text.
	startMark []byte // as the call begins, without its newline
	endMark   []byte // as it ends
}

// capBuffer keeps the first max bytes written to it.
type capBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (c *capBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - len(c.buf); room > 0 {
		c.buf = append(c.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (c *capBuffer) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return string(c.buf)
}

// What is kept of a worker's stderr: the start, and an end long enough for the runtime's report
// of a crash (which comes last, maybe after much printing), as the wasm sandbox keeps.
const (
	stderrHead = 4 << 10
	stderrTail = 60 << 10
)

// startWorker starts a worker of im in dir with an empty environment under a memory cap of mem
// bytes, and waits (within ctx) for its ready frame: its lockdown and every package initializer
// have run.
func startWorker(ctx context.Context, im *image, dir string, mem int64) (*worker, error) {
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	mk := func(nonblockingRead bool) (*os.File, *os.File, error) {
		r, w, err := pipe(nonblockingRead)
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	inR, inW, err1 := mk(false)
	outR, outW, err2 := mk(false)
	errR, errW, err3 := mk(true) // read through the poller: a call's start takes what is left in it (newCall)
	logR, logW, err4 := mk(false)
	repR, repW, err5 := mk(false)
	var errRC syscall.RawConn
	if err3 == nil {
		errRC, err3 = errR.SyscallConn()
	}
	if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
		closeAll()
		return nil, sandbox.Errorf(sandbox.KindInternal, "native: worker pipes: %v", err)
	}
	// The lockdown reads the token first: the pipe holds it until then.
	token := rand.Text()
	if _, err := inW.Write([]byte(token)); err != nil {
		closeAll()
		return nil, sandbox.Errorf(sandbox.KindInternal, "native: worker pipes: %v", err)
	}
	cmd := exec.Command("/proc/self/fd/"+strconv.Itoa(imageFD), strconv.FormatInt(mem, 10))
	cmd.Env = []string{}
	cmd.Dir = dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, logW, errW
	cmd.SysProcAttr = procAttr()
	im.mu.RLock()
	err := errors.New("its program was closed")
	if im.f != nil {
		cmd.ExtraFiles = []*os.File{outW, repW, im.f} // fds 3, 4 and imageFD
		err = cmd.Start()
	}
	im.mu.RUnlock()
	if err != nil {
		closeAll()
		return nil, sandbox.Errorf(sandbox.KindInternal, "native: start worker: %v", err)
	}
	inR.Close()
	outW.Close()
	errW.Close()
	logW.Close()
	repW.Close()
	w := &worker{mem: mem, cmd: cmd, req: inW, frames: bufio.NewReaderSize(outR, 64<<10), framesF: outR,
		stderr: tailbuf.New(stderrHead, stderrTail), exited: make(chan struct{}), logEnd: make(chan struct{}, 1), logDead: make(chan struct{}),
		errR: errRC, startMark: []byte(startMarkPrefix + token + markSuffix), endMark: []byte(endMarkPrefix + token + markSuffix)}
	w.killFn = w.kill
	w.drained.Add(3)
	go func() {
		defer w.drained.Done()
		w.readStderr()
		errR.Close()
	}()
	go func() {
		defer w.drained.Done()
		w.readLogs(logR)
		logR.Close()
	}()
	go func() {
		defer w.drained.Done()
		w.readReport(repR)
		repR.Close()
	}()
	go func() {
		_ = cmd.Wait()
		close(w.exited)
	}()
	stop := context.AfterFunc(ctx, w.kill)
	tag, payload, err := w.readFrame(1 << 10)
	stop()
	if err == nil && tag == 'k' && len(payload) == 0 {
		return w, nil
	}
	w.kill()
	if err == nil {
		err = fmt.Errorf("unexpected frame %q", tag)
	}
	return nil, w.crashError(ctx, err, "initialize")
}

// readStderr keeps what the worker writes on stderr, reading only under errMu (no byte is ever
// read and not yet kept while newCall holds it).
func (w *worker) readStderr() {
	rc := w.errR
	buf := w.errBuf()
	for done := false; !done; {
		if rc.Read(func(fd uintptr) bool {
			w.errMu.Lock()
			defer w.errMu.Unlock()
			n, err := syscall.Read(int(fd), buf)
			if err == syscall.EAGAIN {
				return false // wait until it is readable
			}
			if n > 0 {
				w.stderr.Write(buf[:n])
			} else if err != syscall.EINTR {
				done = true // its end (or an error)
			}
			return true
		}) != nil {
			return
		}
	}
}

// newCall empties the worker's stderr as a call begins: what an earlier call wrote, kept or still
// in the pipe, is not this call's report (nor its bound's). Without this, a byte of the one before
// read late would be.
func (w *worker) newCall() {
	w.errMu.Lock()
	defer w.errMu.Unlock()
	if w.drain == nil { // made once: a closure per call would be an allocation per call
		buf := w.errBuf()
		w.drain = func(fd uintptr) {
			for {
				n, err := syscall.Read(int(fd), buf)
				if n <= 0 && err != syscall.EINTR {
					return // EAGAIN: nothing left
				}
			}
		}
	}
	_ = w.errR.Control(w.drain)
	w.stderr.Reset()
}

// errBuf is the buffer stderr is read into, by readStderr and newCall, under errMu.
func (w *worker) errBuf() []byte {
	w.errOnce.Do(func() { w.errRead = make([]byte, 32<<10) })
	return w.errRead
}

// readLogs sends what the worker prints on stdout between a call's start and end marks to the
// call's logs (Log granted), line by line, at most a host log's worth at a time; other lines (a
// call without logs, a goroutine an earlier call left printing) reach no call.
func (w *worker) readLogs(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4<<10), maxLogLine)
	sc.Split(w.splitLogs)
	logging := false
	for sc.Scan() {
		if bytes.HasSuffix(sc.Bytes(), w.startMark) {
			logging = true // what its line held before it is not the call's
			continue
		}
		line, ended := bytes.CutSuffix(sc.Bytes(), w.endMark)
		if logging && (len(line) > 0 || !ended) {
			w.logMu.Lock()
			if w.logHost != nil {
				w.logHost.AppendLogBytes(line)
			}
			w.logMu.Unlock()
		}
		if ended {
			logging = false
			w.marks.Add(1)
			select {
			case w.logEnd <- struct{}{}:
			default:
			}
		}
	}
	// The pipe failed (the worker is gone): the calls no longer wait for their end of output;
	// keep it flowing.
	close(w.logDead)
	_, _ = io.Copy(io.Discard, r)
}

// maxLogLine is the longest line readLogs takes whole; a longer one reaches the call's logs in
// pieces (as wasm's logs are the guest's writes), never stopping the reader.
const maxLogLine = 64 << 10

// splitLogs is readLogs' bufio.SplitFunc: lines, and the head of a line over maxLogLine with its
// last mark's length kept back, so that a mark (always followed by its newline) is never cut in
// two and a piece never ends with one.
func (w *worker) splitLogs(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return i + 1, bytes.TrimSuffix(data[:i], []byte{'\r'}), nil // as bufio.ScanLines
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	if keep := max(len(w.startMark), len(w.endMark)); len(data) >= maxLogLine && len(data) > keep {
		return len(data) - keep, data[:len(data)-keep], nil
	}
	return 0, nil, nil
}

// awaitLogs waits until the worker's stdout has delivered the lines of its first calls calls (their
// end marks), or cannot (the reader gave up, the worker ended, the call's deadline).
func (w *worker) awaitLogs(ctx context.Context, calls int64) {
	for w.marks.Load() < calls {
		select {
		case <-w.logEnd:
		case <-w.logDead:
			return
		case <-w.exited:
			return
		case <-ctx.Done():
			return
		}
	}
}

// readReport keeps what a test worker's testing package writes on fd 4 (its -test.v report) in
// the capture of the run.
func (w *worker) readReport(r io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			w.logMu.Lock()
			if c := w.capture; c != nil {
				c.Write(buf[:n])
			}
			w.logMu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

// kill ends the process (and anything it started, though it cannot start anything).
func (w *worker) kill() {
	w.killed.Store(true)
	if w.cmd.Process != nil {
		killGroup(w.cmd.Process.Pid)
		_ = w.cmd.Process.Kill()
	}
}

// close ends the worker and releases its pipes.
func (w *worker) close() {
	w.req.Close() // its read of the next request ends, and it exits
	w.kill()
	<-w.exited
	w.drained.Wait()
	w.framesF.Close()
}

// readFrame reads one [tag][uint32 length][payload] frame, refusing a payload over limit
// (errTooLarge: the worker is then broken, the payload unread).
func (w *worker) readFrame(limit int) (byte, []byte, error) {
	var h [5]byte
	if _, err := io.ReadFull(w.frames, h[:]); err != nil {
		return 0, nil, err
	}
	n := int(binary.LittleEndian.Uint32(h[1:]))
	if n > limit {
		return h[0], nil, &frameTooLarge{tag: h[0], n: n}
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(w.frames, buf); err != nil {
		return 0, nil, err
	}
	return h[0], buf, nil
}

type frameTooLarge struct {
	tag byte
	n   int
}

func (e *frameTooLarge) Error() string { return fmt.Sprintf("frame %q of %d bytes", e.tag, e.n) }

// send writes one [uint32 length][payload] message to the worker's stdin.
func (w *worker) send(parts ...[]byte) error {
	m := w.message()
	for _, p := range parts {
		m = append(m, p...)
	}
	return w.sendMessage(m)
}

// message starts a message in the worker's send buffer: its length's room; append the payload and
// sendMessage it.
func (w *worker) message() []byte { return append(w.sendBuf[:0], 0, 0, 0, 0) }

// sendMessage writes m (from message) to the worker's stdin.
func (w *worker) sendMessage(m []byte) error {
	binary.LittleEndian.PutUint32(m, uint32(len(m)-4))
	_, err := w.req.Write(m)
	w.sendBuf = m
	if cap(w.sendBuf) > 1<<20 {
		w.sendBuf = nil
	}
	return err
}

// call runs one call in the worker. The worker is killed at ctx's end (the call's deadline): the
// read of its next frame then fails, and the call ends as KindDeadline.
//
// With logs (Log granted), what the call prints is its logs: the lines between its start and end
// marks, read up to its end mark before it returns. Without, the worker writes no mark, its lines
// are dropped and nothing waits for them (a pipe hop less per call).
func (w *worker) call(ctx context.Context, host *sandbox.Host, args []json.RawMessage, lim sandbox.Limits, logs bool) (json.RawMessage, error) {
	stop := context.AfterFunc(ctx, w.killFn)
	defer func() {
		if !stop() {
			w.broken = true // the deadline's kill has begun: the worker is gone, even if its answer came first
		}
	}()
	if logs {
		w.awaitLogs(ctx, w.calls)
		w.logMu.Lock()
		w.logHost = host
		w.logMu.Unlock()
		defer func() {
			w.logMu.Lock()
			w.logHost = nil
			w.logMu.Unlock()
		}()
	}
	req := binary.LittleEndian.AppendUint64(w.message(), guestgen.StackFor(lim))
	if logs {
		req = append(req, 1)
	} else {
		req = append(req, 0)
	}
	for _, a := range args {
		req = binary.LittleEndian.AppendUint32(req, uint32(len(a)))
		req = append(req, a...)
	}
	w.newCall()
	if err := w.sendMessage(req); err != nil {
		w.broken = true
		return nil, w.crashError(ctx, err, "call")
	}
	if logs {
		w.calls++
	}
	value, err := w.serve(ctx, host, lim)
	if logs && !w.broken {
		w.awaitLogs(ctx, w.calls)
	}
	return value, err
}

// serve reads the worker's frames, answering its host requests with host, until its result (or
// its end: the read fails and the worker is classified).
func (w *worker) serve(ctx context.Context, host *sandbox.Host, lim sandbox.Limits) (json.RawMessage, error) {
	// A result frame is at most the output cap (plus its tag) or an error report.
	resultLimit := max(lim.OutputBytes+1, guestgen.MaxErrorReport)
	hostLimit := int(guestgen.RequestLimit(guestgen.OpCall)) + 4
	for {
		tag, payload, err := w.readFrame(max(resultLimit, hostLimit))
		if big, ok := err.(*frameTooLarge); ok { // readFrame's own (errors.As would allocate per frame)
			w.broken = true
			w.kill()
			if big.tag == 'r' && big.n > lim.OutputBytes {
				return nil, &sandbox.Error{Kind: sandbox.KindOutput, Message: fmt.Sprintf("result is over the %d-byte cap", lim.OutputBytes)}
			}
			return nil, &sandbox.Error{Kind: sandbox.KindMemory, Message: fmt.Sprintf("a host request of %d bytes, over the %d-byte cap", big.n, hostLimit),
				Hint: "send less per host call"}
		}
		if err != nil {
			w.broken = true
			return nil, w.crashError(ctx, err, "call")
		}
		switch tag {
		case 'h':
			if len(payload) < 4 {
				w.broken = true
				w.kill()
				return nil, sandbox.Errorf(sandbox.KindInternal, "native: short host request")
			}
			op, body := binary.LittleEndian.Uint32(payload), payload[4:]
			value, herr := any(nil), guestgen.CheckRequestSize(op, uint32(len(body)))
			if herr == nil {
				value, herr = guestgen.ServeHostOp(host, op, body)
			}
			if ctx.Err() != nil {
				// As in wasm: a deadline during a host call counts as "in flight" only when the
				// host was blocked on external work (HTTP, delegation).
				w.inFlight.Store(host.InFlight())
				w.broken = true
				w.kill()
				return nil, w.crashError(ctx, ctx.Err(), "call")
			}
			if err := w.send(guestgen.HostReply(value, herr)); err != nil {
				w.broken = true
				return nil, w.crashError(ctx, err, "call")
			}
		case 'r':
			if len(payload) > 0 && payload[0] == 'v' && len(payload)-1 > lim.OutputBytes {
				return nil, &sandbox.Error{Kind: sandbox.KindOutput, Message: fmt.Sprintf("result is %d bytes, over the %d-byte cap", len(payload)-1, lim.OutputBytes)}
			}
			value, rerr, ok := guestgen.Result(payload, lim.OutputBytes)
			if !ok {
				w.broken = true
				w.kill()
				return nil, sandbox.Errorf(sandbox.KindInternal, "native: bad result from the worker")
			}
			if errors.Is(rerr, guestgen.ErrBadReport) {
				w.broken = true
				w.kill()
			}
			return value, rerr
		default:
			w.broken = true
			w.kill()
			return nil, sandbox.Errorf(sandbox.KindInternal, "native: bad frame %q from the worker", tag)
		}
	}
}

// crashError classifies a worker that stopped answering: killed at the deadline, its runtime's
// report (depth, memory, deadlock, panic), or a lockdown that failed.
func (w *worker) crashError(ctx context.Context, err error, stage string) *sandbox.Error {
	w.broken = true
	if !w.killed.Load() {
		// It ended on its own: wait for its report.
		<-w.exited
	}
	w.kill()
	<-w.exited
	w.drained.Wait()
	stderr := w.stderr.String()
	// Killed at the deadline: our SIGKILL ended it (whatever it printed, "panic: " among it), or it
	// ended on its own with no report (a report: it crashed first, and that is the verdict).
	reported := strings.Contains(stderr, "fatal error") || strings.Contains(stderr, "panic: ")
	if w.killed.Load() && ctx.Err() != nil && (killedBySIGKILL(w.cmd.ProcessState) || !reported) {
		e := &sandbox.Error{Kind: sandbox.KindDeadline, Message: "deadline exceeded", Err: ctx.Err()}
		if errors.Is(ctx.Err(), context.Canceled) {
			e.Message = "call cancelled"
		}
		if w.inFlight.Load() {
			e.HostCallInFlight = true
			e.Message = "deadline exceeded while a host call was in flight"
		}
		return e
	}
	if e := guestgen.CrashError(stderr, err); e != nil {
		return e
	}
	if runtimeFault(stderr) && w.mem > 0 {
		return &sandbox.Error{Kind: sandbox.KindMemory, Message: "memory cap exceeded: the Go runtime faulted, allocating at the cap (" + firstReportLine(stderr) + ")", Err: err,
			Hint: "use less memory: stream or bound the data the code builds"}
	}
	msg := "the worker stopped"
	if ps := w.cmd.ProcessState; ps != nil {
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			msg = fmt.Sprintf("the worker was killed by signal %d (%v)", int(ws.Signal()), ws.Signal())
		} else if ps.ExitCode() == exitLockdown {
			return &sandbox.Error{Kind: sandbox.KindInternal, Message: "native: the worker could not lock itself down: " + guestgen.CrashReport(stderr),
				Hint: "the native backend needs Linux with seccomp; use the wasm sandbox", Err: err}
		} else {
			msg = fmt.Sprintf("the worker exited with code %d", ps.ExitCode())
		}
	}
	if s := guestgen.CrashReport(stderr); s != "" {
		msg += ": " + s
	}
	return &sandbox.Error{Kind: sandbox.KindPanic, Message: stage + ": " + msg, Err: err}
}

// killedBySIGKILL reports whether the process ended by SIGKILL: the parent's kill (the worker's
// code could send it only to itself, and only past Go's memory safety).
func killedBySIGKILL(ps *os.ProcessState) bool {
	if ps == nil {
		return false
	}
	ws, ok := ps.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// runtimeFault reports whether a worker's report is a fault inside its Go runtime: a signal the
// runtime could not turn into a panic ("SIGSEGV: segmentation violation" or "SIGBUS" starting the
// report, no "panic: ") whose first frame is the runtime's. Under RLIMIT_DATA a refused mmap can
// leave the runtime a nil pointer (seen in the garbage collector's span queues) instead of its
// "out of memory"; code that cannot use unsafe has no other way to fault the runtime, so a worker
// with a memory cap reports it as memory (a runtime bug would be misnamed, intrinsic either way).
func runtimeFault(stderr string) bool {
	s := strings.TrimSpace(stderr)
	if !(strings.HasPrefix(s, "SIGSEGV: segmentation violation") || strings.HasPrefix(s, "SIGBUS")) || strings.Contains(s, "panic: ") {
		return false
	}
	_, dump, ok := strings.Cut(s, "\ngoroutine ")
	if !ok {
		return false
	}
	_, frames, _ := strings.Cut(dump, "\n")
	return strings.HasPrefix(strings.TrimSpace(frames), "runtime.")
}

// firstReportLine is the report's first line.
func firstReportLine(stderr string) string {
	s, _, _ := strings.Cut(strings.TrimSpace(stderr), "\n")
	return s
}
