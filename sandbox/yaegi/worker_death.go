package yaegi

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/artifactforge/forge/sandbox"
)

// Why a worker died: its exit status, the head and tail of its stderr and its memory, classified
// into the sandbox failure a call reports.

// died classifies a worker's death from its exit status and the head and tail of its stderr.
func (p *workerPool) died(w *worker, during string, elapsed time.Duration, mem int64) *sandbox.Error {
	<-w.done
	d := death{during: during, elapsed: elapsed, stderr: w.stderr.String(), memLimit: mem, code: -1}
	var ee *exec.ExitError
	if errors.As(w.err, &ee) {
		d.code = ee.ExitCode()
	} else if w.err == nil {
		d.code = 0
	}
	if ps := w.cmd.ProcessState; ps != nil {
		d.signal = exitSignal(ps)
		d.maxRSS = maxRSS(ps)
		d.cpu = ps.UserTime() + ps.SystemTime()
	}
	d.cpuLimit = time.Duration(p.cfg.CPUSeconds) * time.Second
	return d.classify()
}

// death is what the sandbox knows about a worker that exited on its own.
type death struct {
	during   string
	elapsed  time.Duration
	code     int    // exit code, -1 when killed by a signal
	signal   string // "killed", "CPU time limit exceeded", ... ("" when it exited)
	stderr   string
	maxRSS   int64 // peak resident set, bytes (0 unknown)
	memLimit int64
	cpu      time.Duration
	cpuLimit time.Duration
}

// fatalLine returns the runtime's one-line reason ("fatal error: stack overflow", "panic: ...",
// "runtime: goroutine stack exceeds ...") from a dead worker's stderr.
func fatalLine(stderr string) string {
	for _, prefix := range []string{"fatal error:", "runtime: goroutine stack exceeds", "panic:", "runtime:"} {
		if i := strings.Index(stderr, prefix); i >= 0 {
			l := stderr[i:]
			if j := strings.IndexByte(l, '\n'); j >= 0 {
				l = l[:j]
			}
			return strings.TrimSpace(l)
		}
	}
	return ""
}

// classify maps a worker's death onto an error kind. The worker served one program, so a death
// the runtime attributes to what the code did (memory, stack, a fatal runtime error, CPU) is the
// code's, intrinsic; only a death with no such cause (killed from outside, exited for no reason
// given) stays KindInternal.
func (d death) classify() *sandbox.Error {
	line := fatalLine(d.stderr)
	status := fmt.Sprintf("exit %d", d.code)
	if d.signal != "" {
		status = "signal: " + d.signal
	}
	msg := func(what string) string {
		return fmt.Sprintf("%s (isolation worker died during %s after %v, %s)", what, d.during, d.elapsed.Round(time.Millisecond), status)
	}
	has := func(s ...string) bool {
		for _, x := range s {
			if strings.Contains(d.stderr, x) {
				return true
			}
		}
		return false
	}
	switch {
	case d.code == exitMemory:
		return &sandbox.Error{Kind: sandbox.KindMemory, Message: msg(fmt.Sprintf("memory cap of %d MiB exceeded", d.memLimit>>20)),
			Hint: "use less memory: stream or bound what the code builds"}
	case has("stack overflow", "goroutine stack exceeds"):
		return &sandbox.Error{Kind: sandbox.KindDepth, Message: msg(line), Hint: depthHint}
	case has("out of memory", "cannot allocate memory", "failed to allocate", "mmap failed", "address space collisions"):
		// The runtime's allocator under RLIMIT_AS (the race detector's says "failed to allocate" or
		// "too many address space collisions").
		return &sandbox.Error{Kind: sandbox.KindMemory, Message: msg(line + fmt.Sprintf(": over the memory cap of %d MiB", d.memLimit>>20)),
			Hint: "use less memory: stream or bound what the code builds"}
	case strings.Contains(d.signal, "CPU time limit") || (d.signal == "killed" && d.cpuLimit > 0 && d.cpu >= d.cpuLimit-time.Second):
		return &sandbox.Error{Kind: sandbox.KindDeadline, Message: msg(fmt.Sprintf("CPU time limit of %v used up", d.cpuLimit)),
			Hint: "the code burnt CPU past every call's deadline (runaway goroutines?)"}
	case d.signal == "killed" && d.memLimit > 0 && d.maxRSS >= d.memLimit/2:
		return &sandbox.Error{Kind: sandbox.KindMemory, Message: msg(fmt.Sprintf("killed at a peak of %d MiB resident (memory cap %d MiB): most likely the kernel's OOM killer", d.maxRSS>>20, d.memLimit>>20)),
			Hint: "use less memory: stream or bound what the code builds"}
	case strings.HasPrefix(line, "fatal error:") || strings.HasPrefix(line, "panic:"):
		// concurrent map writes, all goroutines asleep, an unrecovered panic in a goroutine the
		// code started, ...
		return &sandbox.Error{Kind: sandbox.KindPanic, Message: msg(line)}
	}
	what := "isolation worker died for no reason attributable to the code"
	if (d.during == "start" || d.during == "compile") && d.code == 0 {
		what = "isolation worker exited without answering: its binary does not serve workers (a forge CLI does, and so does a main that calls yaegi.MaybeServeWorker() first thing)"
	}
	if line != "" {
		what += ": " + line
	}
	return &sandbox.Error{Kind: sandbox.KindInternal, Message: msg(what)}
}
