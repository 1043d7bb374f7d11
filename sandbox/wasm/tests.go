package wasm

import (
	"context"
	"go/ast"
	"strings"
	"time"

	"github.com/artifactforge/forge/sandbox"
)

// Test builds src and testCode (same package) into one module with the real testing package and
// testify, and runs every TestXxx in its own call under in.Limits.Timeout. A test that fails
// reports testing's own output; a test that hits the deadline, the depth or the memory cap fails
// and the next test gets a fresh instance. The error is for what stops all tests (compile, policy).
func (s *Sandbox) Test(ctx context.Context, src sandbox.Source, testCode string, in sandbox.Input) ([]sandbox.TestResult, error) {
	if s.closed.Load() {
		return nil, sandbox.Errorf(sandbox.KindInternal, "wasm: sandbox closed")
	}
	in.Limits = in.Limits.WithDefaults()
	code, err := gate(src.Code, false)
	if err != nil {
		return nil, err
	}
	tests, names, err := gateTests(code, testCode)
	if err != nil {
		return nil, err
	}
	bin, err := s.builder.build(ctx, testGuest(code, tests, names, testifyVersion()))
	if err != nil {
		return nil, err
	}
	p := &Program{src: src, sum: src.Checksum(), bin: bin, sb: s, test: true, pools: map[uint32]*pool{}}
	pl, err := p.pool(ctx, pagesFor(in.Limits.MemoryBytes))
	if err != nil {
		return nil, err
	}
	defer pl.cm.Close(context.Background())
	defer pl.drain()
	if len(names) == 0 {
		// No tests: still prove that the artifact and the test file build and initialize.
		inst, err := pl.get(ctx)
		if err != nil {
			return nil, err
		}
		pl.put(inst, true)
		return []sandbox.TestResult{}, nil
	}
	results := make([]sandbox.TestResult, 0, len(names))
	for _, name := range names {
		res, err := pl.runTest(ctx, name, in)
		if err != nil {
			return results, err
		}
		results = append(results, res)
	}
	return results, nil
}

// gateTests normalizes the test file to package artifact, checks it against the test policy and
// lists its TestXxx(t *testing.T) functions.
func gateTests(code, testCode string) (string, []string, error) {
	tests, err := gate(testCode, true)
	if err != nil {
		return "", nil, prefixed("tests: ", err)
	}
	_, f, _, err := normalizePackage(tests)
	if err != nil {
		return "", nil, prefixed("tests: ", err)
	}
	var names []string
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && strings.HasPrefix(fd.Name.Name, "Test") && isTestFunc(fd) {
			names = append(names, fd.Name.Name)
		}
	}
	return tests, names, nil
}

func prefixed(p string, err error) error {
	e := *sandbox.AsError(err)
	e.Message = p + e.Message
	return &e
}

func isTestFunc(fd *ast.FuncDecl) bool {
	if fd.Type.Params == nil || len(fd.Type.Params.List) != 1 || len(fd.Type.Params.List[0].Names) > 1 {
		return false
	}
	star, ok := fd.Type.Params.List[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "T"
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

func (pl *pool) runTest(ctx context.Context, name string, in sandbox.Input) (sandbox.TestResult, error) {
	start := time.Now()
	res := sandbox.TestResult{Name: name}
	ctx, cancel := context.WithTimeout(ctx, in.Limits.Timeout)
	defer cancel()
	inst, err := pl.get(ctx)
	if err != nil {
		return res, err
	}
	if inst.fnTest == nil {
		pl.put(inst, false)
		return res, sandbox.Errorf(sandbox.KindInternal, "wasm: test module lacks forge_test")
	}
	host := sandbox.NewHost(ctx, in)
	var report strings.Builder
	inst.capture = &report
	passed, terr := inst.test(ctx, host, name)
	inst.capture = nil
	res.Duration = time.Since(start)
	res.Passed = passed && terr == nil
	res.Message = testMessage(report.String())
	if terr != nil {
		res.Message = strings.TrimSpace(res.Message + "\n" + terr.Error())
	}
	if v := host.Violation(); v != nil {
		res.Passed = false
		res.Message = strings.TrimSpace(res.Message + "\n" + v.Error())
	}
	res.Logs = host.Logs()
	pl.put(inst, inst.healthy())
	return res, nil
}

func (inst *instance) test(ctx context.Context, host *sandbox.Host, name string) (bool, error) {
	inst.host, inst.stopped, inst.inFlight = host, false, false
	inst.stderr.reset()
	ctx = context.WithValue(ctx, instanceKey{}, inst)
	buf, err := inst.input(ctx, uint32(len(name)))
	if err != nil {
		return false, err
	}
	copy(buf, name)
	inst.stack[0] = uint64(len(name))
	if err := inst.fnTest.CallWithStack(ctx, inst.stack); err != nil {
		return false, inst.classify(ctx, err, "call")
	}
	return inst.stack[0] == 1, nil
}

// testMessage keeps the failure lines of testing's report (drops the --- FAIL header and the
// summary lines).
func testMessage(report string) string {
	var lines []string
	for _, l := range strings.Split(report, "\n") {
		t := strings.TrimSpace(l)
		if t == "" || t == "FAIL" || t == "PASS" || strings.HasPrefix(t, "--- FAIL") || strings.HasPrefix(t, "--- PASS") || strings.HasPrefix(t, "=== RUN") {
			continue
		}
		lines = append(lines, strings.TrimRight(l, " \t"))
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}
