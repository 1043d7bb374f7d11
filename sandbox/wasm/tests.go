package wasm

import (
	"context"
	"regexp"
	"strings"
	"time"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/internal/guestgen"
)

// Test builds src and testCode (same package) into one module with the real testing package and
// testify, and runs every TestXxx in its own call under in.Limits.Timeout. A test that fails
// reports testing's own output; a test that hits the deadline, the depth or the memory cap fails
// and the next test gets a fresh instance. The error is for what stops all tests (compile, policy).
//
// The tests run in wazero's interpreter first, which starts a test module about 6x sooner than the
// compiler; a test that hits its deadline or the call-depth cap there runs again in compiled code,
// so that a verdict never depends on the interpreter's speed or its 2,000-frame call stack (see
// engineKind).
func (s *Sandbox) Test(ctx context.Context, src sandbox.Source, testCode string, in sandbox.Input) ([]sandbox.TestResult, error) {
	if s.closed.Load() {
		return nil, sandbox.Errorf(sandbox.KindInternal, "wasm: sandbox closed")
	}
	in.Limits = in.Limits.WithDefaults()
	code, tests, names, err := gateSuite(src.Code, testCode)
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
	bin, err := s.builder.build(ctx, testGuest(code, tests, names, testify), false)
	if err != nil {
		return nil, err
	}
	done, slow, err := s.runTestModule(ctx, src, bin, engTestInterp, names, in)
	if err != nil {
		return nil, err
	}
	if len(slow) > 0 && ctx.Err() == nil {
		s.reruns.Add(int64(len(slow)))
		again, _, err := s.runTestModule(ctx, src, bin, engTestCompiled, slow, in)
		if err != nil {
			return nil, err
		}
		for n, r := range again {
			done[n] = r
		}
	}
	if len(names) == 0 {
		return []sandbox.TestResult{}, nil
	}
	results := make([]sandbox.TestResult, 0, len(names))
	for _, n := range names {
		results = append(results, done[n])
	}
	return results, nil
}

// runTestModule runs the named tests of a built test module in a runtime of the given kind, a
// fresh instance each time the module stops. It returns every test's result and the names of the
// tests that a limit the interpreter meets sooner stopped (deadline, call depth). With no names it
// only proves that the module initializes.
func (s *Sandbox) runTestModule(ctx context.Context, src sandbox.Source, bin []byte, kind engineKind, names []string, in sandbox.Input) (map[string]sandbox.TestResult, []string, error) {
	p := &Program{src: src, sum: src.Checksum(), bin: bin, sb: s, kind: kind, pools: map[uint32]*pool{}}
	pl, err := p.pool(ctx, pagesFor(in.Limits.MemoryBytes))
	if err != nil {
		return nil, nil, err
	}
	defer pl.close() // gives back the compiled module
	defer pl.drain()
	done := map[string]sandbox.TestResult{}
	if len(names) == 0 {
		inst, _, err := pl.get(ctx)
		if err != nil {
			return nil, nil, err
		}
		pl.put(inst, true)
		return done, nil, nil
	}
	var slow []string
	remaining := names
	for len(remaining) > 0 {
		batch, limited, err := pl.runTests(ctx, remaining, in)
		if err != nil {
			return nil, nil, err
		}
		if n := len(batch); limited && n > 0 && !batch[n-1].Passed {
			slow = append(slow, batch[n-1].Name) // the test that was running
		}
		progress := false
		for _, r := range batch {
			if _, seen := done[r.Name]; !seen {
				done[r.Name], progress = r, true
			}
		}
		var next []string
		for _, n := range remaining {
			if _, ok := done[n]; !ok {
				next = append(next, n)
			}
		}
		if !progress {
			for _, n := range next {
				done[n] = sandbox.TestResult{Name: n, Message: "the test module stopped before this test ran"}
			}
			if limited {
				slow = append(slow, next...)
			}
			next = nil
		}
		remaining = next
	}
	return done, slow, nil
}

func gateSuite(artifactCode, testCode string) (code, tests string, names []string, err error) {
	return guestgen.GateSuite(artifactCode, testCode)
}

// drain closes the idle instances (a test module is used once).
func (pl *pool) drain() {
	for {
		select {
		case inst := <-pl.idle:
			inst.close()
			<-pl.sem
		default:
			return
		}
	}
}

// runTests runs the named tests in one fresh instance (testing's M.Run, once) with a deadline of
// Limits.Timeout per test. It returns a result for every test that finished; when the module
// stops (deadline, depth or memory cap), the test that was running fails with that error and the
// caller reruns the tests that never started in a new instance. limited reports that the
// deadline or the call-depth cap stopped the module. The instance starts before the deadline
// begins: starting one is the sandbox's cost, not the tests'.
func (pl *pool) runTests(ctx context.Context, names []string, in sandbox.Input) (results []sandbox.TestResult, limited bool, err error) {
	inst, _, err := pl.get(ctx)
	if err != nil {
		return nil, false, err
	}
	defer pl.put(inst, false) // testing keeps state across M.Run: one run per instance
	ctx, cancel := context.WithTimeout(ctx, in.Limits.Timeout*time.Duration(len(names)))
	defer cancel()
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = regexp.QuoteMeta(n)
	}
	host := sandbox.NewHost(ctx, in)
	var report strings.Builder
	inst.capture = &report
	_, terr := inst.test(ctx, host, "^("+strings.Join(quoted, "|")+")$")
	inst.capture = nil
	results = parseTestReport(report.String(), terr)
	if terr != nil {
		k := sandbox.AsError(terr).Kind
		limited = k == sandbox.KindDeadline || k == sandbox.KindDepth
	}
	results = guestgen.FinishTestResults(results, host)
	return results, limited, nil
}

func parseTestReport(report string, stopErr error) []sandbox.TestResult {
	return guestgen.ParseTestReport(report, stopErr)
}

func (inst *instance) test(ctx context.Context, host *sandbox.Host, pattern string) (bool, error) {
	inst.host, inst.stopped, inst.inFlight = host, false, false
	inst.stderr.Reset()
	ctx = context.WithValue(ctx, instanceKey{}, inst)
	buf, err := inst.input(ctx, uint32(len(pattern)))
	if err != nil {
		return false, err
	}
	copy(buf, pattern)
	inst.stack[0] = uint64(len(pattern))
	if err := inst.fnTest.CallWithStack(ctx, inst.stack); err != nil {
		return false, inst.classify(ctx, err, "call")
	}
	return inst.stack[0] == 0, nil
}
