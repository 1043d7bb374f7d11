package wasm

import (
	"context"
	"go/parser"
	"go/token"
	"regexp"
	"strings"
	"time"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/gate"
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
	bin, err := s.builder.build(ctx, testGuest(code, tests, names, testifyVersion()), false)
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

// gateSuite gates an artifact and its test file as Test compiles them: the artifact as in
// Compile, the test file under the test rules with the artifact's imports visible, then the
// boundary check (the artifact sees no name only the test file declares). It returns both
// normalized files and the test names.
func gateSuite(artifactCode, testCode string) (code, tests string, names []string, err error) {
	code, af, err := gateCode(artifactCode, false, nil)
	if err != nil {
		return "", "", nil, err
	}
	tests, names, err = gateTests(testCode, fileImports(af))
	if err != nil {
		return "", "", nil, err
	}
	fset := token.NewFileSet()
	af, aerr := parser.ParseFile(fset, "artifact.go", code, parser.SkipObjectResolution|parser.ParseComments)
	tf, terr := parser.ParseFile(fset, "acceptance.go", tests, parser.SkipObjectResolution|parser.ParseComments)
	if aerr != nil || terr != nil { // both parsed in gateCode already
		return "", "", nil, sandbox.Errorf(sandbox.KindInternal, "wasm: reparse gated files: %v %v", aerr, terr)
	}
	if err := gate.CheckTestBoundary(fset, af, tf); err != nil {
		return "", "", nil, gate.InTests(err)
	}
	return code, tests, names, nil
}

// gateTests normalizes the test file to package artifact, adds what it forgot to import (from the
// artifact's imports first), checks it against the test policy and lists its TestXxx(t *testing.T)
// functions.
func gateTests(testCode string, artifactImports map[string]string) (string, []string, error) {
	tests, f, err := gateCode(testCode, true, artifactImports)
	if err != nil {
		return "", nil, prefixed("tests: ", err)
	}
	names := sandbox.TestNames(f)
	return tests, names, nil
}

func prefixed(p string, err error) error {
	e := *sandbox.AsError(err)
	e.Message = p + e.Message
	return &e
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
	for i := range results {
		if v := host.Violation(); v != nil {
			results[i].Passed = false
			results[i].Message = strings.TrimSpace(results[i].Message + "\n" + v.Error())
		}
	}
	if len(results) > 0 {
		results[0].Logs = host.Logs()
	}
	return results, limited, nil
}

// parseTestReport reads testing's -test.v report: one result per top-level test with a verdict
// line, its messages being the lines printed while it ran. A test that was running when the module
// stopped fails with stopErr.
func parseTestReport(report string, stopErr error) []sandbox.TestResult {
	var results []sandbox.TestResult
	var cur *sandbox.TestResult
	var msgs []string
	for _, line := range strings.Split(report, "\n") {
		switch {
		case strings.HasPrefix(line, "=== RUN   ") && !strings.Contains(line, "/"):
			cur = &sandbox.TestResult{Name: strings.TrimSpace(strings.TrimPrefix(line, "=== RUN   "))}
			msgs = nil
		case strings.HasPrefix(line, "=== "):
		case cur != nil && (strings.HasPrefix(line, "--- PASS: "+cur.Name+" ") || strings.HasPrefix(line, "--- FAIL: "+cur.Name+" ") ||
			strings.HasPrefix(line, "--- SKIP: "+cur.Name+" ")):
			cur.Passed = !strings.HasPrefix(line, "--- FAIL")
			if i := strings.LastIndex(line, "("); i > 0 {
				if d, err := time.ParseDuration(strings.TrimSuffix(strings.TrimSpace(line[i+1:]), ")")); err == nil {
					cur.Duration = d
				}
			}
			cur.Message = strings.TrimSpace(strings.Join(msgs, "\n"))
			results = append(results, *cur)
			cur = nil
		case cur != nil:
			msgs = append(msgs, strings.TrimRight(line, " \t"))
		}
	}
	if cur != nil && stopErr != nil {
		cur.Passed = false
		cur.Message = strings.TrimSpace(strings.Join(msgs, "\n") + "\n" + stopErr.Error())
		results = append(results, *cur)
	}
	return results
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
