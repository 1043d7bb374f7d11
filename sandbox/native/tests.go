package native

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/internal/guestgen"
)

// reportBytes bounds what is kept of a test run's -test.v report.
const reportBytes = 1 << 20

// testGuest is the module of a test run: the artifact and its test file (normalized to package
// artifact), the real testing package and testify (guestgen.Testify: its copy without the HTTP
// assertions), behind the same lockdown as a call's worker.
func testGuest(code, tests string, names []string, nums sysnums, testify guestgen.Testify) (guestModule, error) {
	locked, err := withLockdown(code)
	if err != nil {
		return guestModule{}, err
	}
	var main strings.Builder
	main.WriteString(`package main

import (
	"flag"
	"io"
	"os"
	"reflect"
	"regexp"
	"testing"
	"time"

	"forge/artifact"
	"forge/lockdown"
)

var _ = artifact.Forge__Loaded

// prints is fd 1, where the artifact's fmt.Print goes (the run's logs); testing writes its report
// to fd 4, for os.Stdout is fd 4 but while a test function runs (testing keeps the file it finds
// there when m.Run starts). A line the artifact prints then never reads as testing's own
// ("--- PASS: TestX").
var prints, report = os.Stdout, os.NewFile(4, "report")

func restore() { os.Stdout = report }

var tests = []testing.InternalTest{
`)
	for _, n := range names {
		fmt.Fprintf(&main, "\t{Name: %q, F: func(t *testing.T) { os.Stdout = prints; defer restore(); artifact.%s(t) }},\n", n, n)
	}
	main.WriteString("}\n\n" + guestgen.TestDepsSource + `
// main runs the tests whose names match the pattern of the one request, with -test.v: the report
// goes to stdout. testing's exit code (0: all passed) is the worker's.
func main() {
	lockdown.WriteFrame('k', nil)
	pattern := string(lockdown.ReadRequest())
	os.Args = []string{"artifact.test"}
	restore()
	m := testing.MainStart(deps{}, tests, nil, nil, nil)
	flag.Set("test.run", pattern)
	flag.Set("test.v", "true")
	lockdown.Begin(true)
	code := m.Run()
	lockdown.End()
	lockdown.Exit(code)
}
`)
	g := guestModule{files: map[string]string{
		"go.mod":                  testify.GoMod,
		"main.go":                 main.String(),
		"host/host.go":            guestgen.HostAPISource,
		"host/transport.go":       transportSource,
		"lockdown/lockdown.go":    lockdownSource(nums),
		"artifact/artifact.go":    locked,
		"artifact/acceptance.go":  tests,
		"artifact/forge__call.go": "package artifact\n\n// Forge__Loaded keeps package main's import of the artifact when there are no tests.\nfunc Forge__Loaded() {}\n",
	}}
	for p, src := range testify.Files {
		g.files[p] = src
	}
	return g, nil
}

// Test builds src and testCode (same package) into one locked-down executable with the real
// testing package and testify, and runs the tests in a worker of it, each under in.Limits.Timeout.
// A test that stops the worker (deadline, depth, memory, a panic) fails with that error and the
// tests that had not run yet run in a new worker. The error is for what stops all tests (compile,
// policy).
func (s *Sandbox) Test(ctx context.Context, src sandbox.Source, testCode string, in sandbox.Input) ([]sandbox.TestResult, error) {
	if s.closed.Load() {
		return nil, sandbox.Errorf(sandbox.KindInternal, "native: sandbox closed")
	}
	in.Limits = in.Limits.WithDefaults()
	code, tests, names, err := guestgen.GateSuite(src.Code, testCode)
	if err != nil {
		return nil, err
	}
	tc, err := s.builder.toolchain()
	if err != nil {
		return nil, err
	}
	testify, err := guestgen.LoadTestify(ctx, tc)
	if err != nil {
		return nil, err
	}
	g, err := testGuest(code, tests, names, hostSysnums, testify)
	if err != nil {
		return nil, sandbox.Errorf(sandbox.KindCompile, "%v", err)
	}
	bin, key, err := s.builder.build(ctx, g)
	if err != nil {
		return nil, err
	}
	img, err := s.image(key, bin)
	if err != nil {
		return nil, err
	}
	defer s.dropImage(img)
	p := &Program{img: img, static: staticBytes(bin)}
	pl := &pool{prog: p, mem: in.Limits.MemoryBytes}
	if len(names) == 0 { // only prove that it initializes
		w, err := s.startTimed(ctx, pl, in.Limits.Timeout)
		if err != nil {
			return nil, err
		}
		w.close()
		return []sandbox.TestResult{}, nil
	}
	done := map[string]sandbox.TestResult{}
	for remaining := names; len(remaining) > 0; {
		batch, err := s.runTests(ctx, pl, remaining, in)
		if err != nil {
			return nil, err
		}
		var next []string
		progress := false
		for _, r := range batch {
			if _, seen := done[r.Name]; !seen {
				done[r.Name], progress = r, true
			}
		}
		for _, n := range remaining {
			if _, ok := done[n]; !ok {
				if !progress {
					done[n] = sandbox.TestResult{Name: n, Message: "the test worker stopped before this test ran"}
					continue
				}
				next = append(next, n)
			}
		}
		remaining = next
	}
	results := make([]sandbox.TestResult, 0, len(names))
	for _, n := range names {
		results = append(results, done[n])
	}
	return results, nil
}

// startTimed starts a worker of pl's executable, its start bounded as a call's (startAllowance).
func (s *Sandbox) startTimed(ctx context.Context, pl *pool, timeout time.Duration) (*worker, error) {
	sctx, cancel := context.WithTimeout(ctx, timeout+startAllowance)
	defer cancel()
	return s.start(sctx, pl)
}

// runTests runs the named tests in one fresh worker, Limits.Timeout per test. It returns a result
// for every test that finished and, when the worker stopped, for the one that was running.
func (s *Sandbox) runTests(ctx context.Context, pl *pool, names []string, in sandbox.Input) ([]sandbox.TestResult, error) {
	w, err := s.startTimed(ctx, pl, in.Limits.Timeout) // before the deadline: a start is not the tests' time
	if err != nil {
		return nil, err
	}
	defer w.close()
	ctx, cancel := context.WithTimeout(ctx, in.Limits.Timeout*time.Duration(len(names)))
	defer cancel()
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = regexp.QuoteMeta(n)
	}
	report := &capBuffer{max: reportBytes}
	host := sandbox.NewHost(ctx, in)
	w.logMu.Lock()
	w.capture, w.logHost = report, host // the artifact's prints are the run's logs
	w.logMu.Unlock()
	stop := context.AfterFunc(ctx, w.kill)
	defer stop()
	var stopErr error
	if err := w.send([]byte("^(" + strings.Join(quoted, "|") + ")$")); err != nil {
		stopErr = w.crashError(ctx, err, "test")
	} else if _, err := w.serve(ctx, host, in.Limits); err != nil {
		// The worker ends after its tests: only a stop that was not testing's own exit (0: all
		// passed, 1: some failed) is a test's error.
		if !exitedNormally(w) {
			stopErr = err
		}
	}
	<-w.exited
	w.drained.Wait()
	results := guestgen.ParseTestReport(report.String(), stopErr)
	if n := len(results); stopErr != nil && n > 0 && !results[n-1].Passed && !strings.Contains(results[n-1].Message, stopErr.Error()) {
		// testing reports a panicking test's verdict and then the worker dies: the runtime's
		// report (on stderr) is its message.
		results[n-1].Message = strings.TrimSpace(results[n-1].Message + "\n" + stopErr.Error())
	}
	results = guestgen.FinishTestResults(results, host)
	return results, nil
}

// exitedNormally reports whether w exited on its own with testing's exit code 0 or 1.
func exitedNormally(w *worker) bool {
	<-w.exited
	ps := w.cmd.ProcessState
	if ps == nil {
		return false
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return false
	}
	return ps.ExitCode() == 0 || ps.ExitCode() == 1
}

var _ sandbox.Tester = (*Sandbox)(nil)
