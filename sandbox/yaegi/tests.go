package yaegi

import (
	"context"
	"fmt"
	"go/ast"
	"strings"
	"time"

	"github.com/traefik/yaegi/interp"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/gate"
)

// RunTests runs Go acceptance tests (testCode: TestXxx(t *testing.T) functions using testing and
// testify assert/require, in the artifact's package) against the artifact in a fresh yaegi
// sandbox with default limits.
func RunTests(ctx context.Context, artifactCode, testCode string) ([]sandbox.TestResult, error) {
	return New(Options{}).Test(ctx, sandbox.Source{Code: artifactCode}, testCode, sandbox.Input{})
}

// testSuite is an artifact and its tests, gated and rewritten, ready to load into interpreters.
type testSuite struct {
	artifact, tests string
	names           []string
}

func prepareTests(src sandbox.Source, testCode string) (*testSuite, error) {
	fset, f, parsed, err := gateSource(src.Code)
	if err != nil {
		return nil, err
	}
	tf, tparsed, err := gateTestFile(fset, f, testCode)
	if err != nil {
		return nil, gate.InTests(err)
	}
	names := sandbox.TestNames(tf)
	// Type-check both files as one package for the rewrites (package names aligned in the AST only).
	fn, tn := f.Name.Name, tf.Name.Name
	f.Name.Name, tf.Name.Name = sandbox.PackageName, sandbox.PackageName
	info := typeCheck(fset, []*ast.File{f, tf})
	f.Name.Name, tf.Name.Name = fn, tn // the rewrites edit by offsets computed from the names

	ra := newRewriter(fset, f, parsed, info)
	ra.guardDepth()
	ra.guardWrites()
	ra.gaps()
	extra := ra.autoImports()
	if ra.needSort {
		extra += "; import forge__sort \"sort\""
	}
	ra.packageMain(extra)

	rt := newRewriter(fset, tf, tparsed, info)
	rt.guardDepth()
	rt.guardWrites()
	rt.gaps()
	for name, path := range ra.imports {
		if rt.imports[name] == "" && !rt.declared[name] {
			rt.imports[name] = path // visible to the test file too: yaegi scopes imports by package
		}
	}
	autoTest := rt.autoImports()
	// yaegi scopes imports by package, not by file: the test file must not import again what the
	// artifact file imported (same path and name), nor the sandbox's own packages.
	for _, is := range tf.Imports {
		if ra.imports[gate.ImportName(is)] != "" && ra.imports[gate.ImportName(is)] == rt.imports[gate.ImportName(is)] {
			rt.blank(is)
		}
	}
	extra = "; import forge__testing \"testing\"" + autoTest
	if rt.needSort && !ra.needSort {
		extra += "; import forge__sort \"sort\""
	}
	rt.add(rt.off(tf.Name.Pos()), rt.off(tf.Name.End()), "main"+extra)
	var tail strings.Builder
	for _, n := range names {
		fmt.Fprintf(&tail, "func forge__run%s() {\n\tforge__depth = 0\n\tforge__maxDepth = forge__slot.MaxDepth\n\tt := forge__testing.Forge__Begin(%q)\n\tdefer func() { forge__testing.Forge__End(t, recover()) }()\n\t%s(t)\n}\n", n, n, n)
	}
	return &testSuite{artifact: ra.apply(globals), tests: rt.apply(tail.String()), names: names}, nil
}

// testInstance is an interpreter with the artifact and its tests loaded.
type testInstance struct {
	in    *interp.Interpreter
	slot  *slot
	cur   *T
	progs map[string]*interp.Program
}

func (ts *testSuite) load(ctx context.Context, in sandbox.Input) (*testInstance, error) {
	s := &slot{MaxDepth: in.Limits.MaxDepth}
	ti := &testInstance{slot: s, progs: map[string]*interp.Program{}}
	it, err := newInterpreter(s, true, nil, referencedCopies(ts.artifact, ts.tests), genericCode(ts.artifact, ts.tests), importPaths(ts.artifact, ts.tests))
	if err != nil {
		return nil, &sandbox.Error{Kind: sandbox.KindInternal, Message: err.Error(), Err: err}
	}
	if err := it.Use(interp.Exports{"testing/testing": testingExports(&ti.cur)}); err != nil {
		return nil, &sandbox.Error{Kind: sandbox.KindInternal, Message: err.Error(), Err: err}
	}
	ti.in = it
	lctx, cancel := context.WithTimeout(ctx, in.Limits.Timeout)
	defer cancel()
	s.ctx, s.in = lctx, in
	for i, code := range []string{ts.artifact, ts.tests} {
		prog, err := compileRecovered(it, code)
		if err != nil {
			e := compileError(err)
			if i == 1 {
				e.Message = "tests: " + e.Message
			}
			return nil, e
		}
		if _, err := it.ExecuteWithContext(lctx, prog); err != nil {
			return nil, runError(err, s, lctx)
		}
	}
	for _, n := range ts.names {
		p, err := it.Compile("forge__run" + n + "()")
		if err != nil {
			return nil, &sandbox.Error{Kind: sandbox.KindInternal, Message: "compile test stub: " + err.Error(), Err: err}
		}
		ti.progs[n] = p
	}
	return ti, nil
}

// Test runs every TestXxx in testCode against src, each under in.Limits.Timeout, and reports each
// test's outcome. A test that hits its deadline or the depth cap fails and the next test gets a
// fresh interpreter. The error is for what stops all tests (compile or policy).
func (s *Sandbox) Test(ctx context.Context, src sandbox.Source, testCode string, in sandbox.Input) ([]sandbox.TestResult, error) {
	in.Limits = in.Limits.WithDefaults()
	if s.opts.Isolation == sandbox.IsolationProcess || src.Limits.Isolation == sandbox.IsolationProcess || in.Limits.Isolation == sandbox.IsolationProcess {
		return s.testIsolated(ctx, src, testCode, in) // everything after parse and policy in a worker
	}
	ts, err := prepareTests(src, testCode)
	if err != nil {
		return nil, err
	}
	var ti *testInstance
	if len(ts.names) == 0 {
		// No tests: still prove that the artifact and the test file compile and load.
		if _, err := ts.load(ctx, in); err != nil {
			return nil, err
		}
		return []sandbox.TestResult{}, nil
	}
	results := make([]sandbox.TestResult, 0, len(ts.names))
	for _, name := range ts.names {
		if ti == nil {
			if ti, err = ts.load(ctx, in); err != nil {
				return nil, err
			}
		}
		res, keep := ti.run(ctx, name, in)
		results = append(results, res)
		if !keep {
			ti = nil
		}
	}
	return results, nil
}

func (ti *testInstance) run(ctx context.Context, name string, in sandbox.Input) (sandbox.TestResult, bool) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, in.Limits.Timeout)
	defer cancel()
	sl := ti.slot
	host := sandbox.NewHost(ctx, in)
	sl.ctx, sl.in, sl.depthHit, sl.panicPos, sl.MaxDepth = ctx, in, false, "", in.Limits.MaxDepth
	sl.setHost(host)
	sl.cancel, sl.done = cancel, make(chan struct{})
	ti.cur = nil
	_, xerr := ti.in.ExecuteWithContext(ctx, ti.progs[name])
	close(sl.done)
	res := sandbox.TestResult{Name: name, Duration: time.Since(start)}
	t := ti.cur
	if t != nil {
		t.mu.Lock()
		res.Passed = !t.failed
		res.Message = strings.Join(t.msgs, "\n")
		res.Logs = append(res.Logs, t.logs...)
		t.mu.Unlock()
	}
	keep := true
	if xerr != nil {
		e := runError(xerr, sl, ctx)
		res.Passed = false
		if res.Message != "" {
			res.Message += "\n"
		}
		res.Message += e.Error()
		keep = false
	}
	if v := host.Violation(); v != nil {
		res.Passed = false
		res.Message = strings.TrimSpace(res.Message + "\n" + v.Error())
	}
	res.Logs = append(res.Logs, host.Logs()...)
	if keep {
		sl.setHost(nil)
		sl.ctx = nil
	}
	return res, keep
}
