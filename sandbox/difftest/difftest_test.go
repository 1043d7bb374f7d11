package difftest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/native"
	"github.com/artifactforge/forge/sandbox/sandboxtest"
	"github.com/artifactforge/forge/sandbox/wasm"
	"github.com/artifactforge/forge/sandbox/yaegi"
)

// oracle is the wasm sandbox every case is answered by first; inproc and workers are yaegi's two
// placements, held to oracle's answers.
var (
	oracle *wasm.Sandbox
	interp *yaegi.Sandbox
	// nat is sandbox/native, held to oracle's answers too; nil where it cannot run.
	nat *native.Sandbox
)

// placements are yaegi's two placements, by the isolation a Source and Input ask for.
var placements = []struct{ name, isolation string }{
	{"inprocess", sandbox.IsolationNone},
	{"worker", sandbox.IsolationProcess},
}

// TestMain lets the test binary double as yaegi's isolation worker, and shares one wasm Sandbox
// (and its build cache, the one the wasm package's tests use: each module is built once across
// runs) and one yaegi Sandbox across every case.
func TestMain(m *testing.M) {
	yaegi.MaybeServeWorker()
	var err error
	oracle, err = wasm.New(wasm.Options{CacheDir: sandboxtest.BuildCacheDir()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	interp = yaegi.New(yaegi.Options{})
	nat, _ = native.New(native.Options{CacheDir: sandboxtest.BuildCacheDir()}) // nil where it cannot run
	code := m.Run()
	if nat != nil {
		nat.Close()
	}
	interp.Close()
	oracle.Close()
	os.Exit(code)
}

// hangBound is the deadline of a program or test that is expected to answer: on a loaded machine
// wasm may take seconds where it usually takes milliseconds, and the test compares answers, not
// speed (a program whose expected outcome is a deadline keeps its own).
const hangBound = time.Minute

// answer is what a backend did with one program: the JSON value it returned, or the kind of
// its error (and the error, for the report).
type answer struct {
	value   string
	kind    sandbox.Kind
	err     error
	compile bool // the error came from Compile
}

func (a answer) String() string {
	if a.err != nil {
		return fmt.Sprintf("%s error: %v", a.kind, a.err)
	}
	return a.value
}

// refusal reports whether a is a refusal by name: a Compile error of kind compile that says what
// to write instead (a Hint). An interpreter gap the rewrites do not cover must end so.
func (a answer) refusal() bool {
	var se *sandbox.Error
	return a.compile && a.kind == sandbox.KindCompile && errors.As(a.err, &se) && se.Hint != ""
}

// same reports whether yaegi's answer y agrees with the oracle's o: the same value (as JSON), or
// the same error kind.
func same(o, y answer) bool {
	if o.err != nil || y.err != nil {
		return o.err != nil && y.err != nil && o.kind == y.kind
	}
	return sandboxtest.JSONEqual([]byte(o.value), []byte(y.value))
}

func run(sb sandbox.Sandbox, c sandboxtest.Case, isolation string) answer {
	ctx := context.Background()
	lim := c.Limits
	lim.Isolation = isolation
	if len(c.Kinds) == 0 && lim.Timeout < hangBound {
		lim.Timeout = hangBound // a program that answers: its answer, not its speed, is compared
	}
	p, err := sb.Compile(ctx, sandbox.Source{Code: c.Code, Func: c.Func, Limits: lim})
	if err != nil {
		return answer{kind: sandbox.KindOf(err), err: err, compile: true}
	}
	defer p.Close()
	out, err := sb.Run(ctx, p, sandbox.Input{Args: c.Args, Caps: c.Caps, Limits: lim})
	if err != nil {
		return answer{kind: sandbox.KindOf(err), err: err}
	}
	return answer{value: string(out.Value)}
}

// verdict compares yaegi's answer y in a placement with the oracle's o: "" when it agrees or is
// a refusal by name, else what differs.
func verdict(o, y answer) string {
	if same(o, y) || (o.err == nil && y.refusal()) {
		return ""
	}
	if o.err == nil && y.compile && y.kind == sandbox.KindCompile {
		return fmt.Sprintf("refused without saying what to write (no hint): %v; wasm answers %s", y.err, o)
	}
	return fmt.Sprintf("answers %s; wasm answers %s", y, o)
}

// TestValidCorpus runs every valid corpus program on wasm and on yaegi in both placements.
func TestValidCorpus(t *testing.T) { runCorpus(t, "../testdata/valid") }

// TestHeldOut runs the programs of testdata: valid Go that yaegi answered wrong, or refused
// without naming the construct. wasm must give the answer of their "want:" header (computed by
// native Go), yaegi the same answer or a refusal by name.
func TestHeldOut(t *testing.T) { runCorpus(t, "testdata") }

// runCorpus runs every program of dir on wasm and on yaegi in both placements (a program for one
// backend only, "backends:", is skipped), and checks the oracle against the program's "want:".
func runCorpus(t *testing.T, dir string) {
	cases, err := sandboxtest.LoadCorpus(dir)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	refused, spent := newRefusals(), newSpent()
	for _, c := range cases {
		if len(c.Backends) > 0 {
			continue // a case for one backend only: nothing to compare
		}
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			t0 := time.Now()
			o := run(oracle, c, sandbox.IsolationNone)
			spent.add("wasm", time.Since(t0))
			if c.HasWant && (o.err != nil || !sandboxtest.JSONEqual([]byte(o.value), c.Want)) {
				t.Errorf("wasm answers %s, want %s", o, c.Want)
			}
			for _, pl := range placements {
				if len(c.Modes) > 0 && !modeOK(c.Modes, pl.isolation) {
					continue
				}
				t0 := time.Now()
				y := run(interp, c, pl.isolation)
				spent.add(pl.name, time.Since(t0))
				if msg := verdict(o, y); msg != "" {
					t.Errorf("yaegi %s %s", pl.name, msg)
				} else if y.err != nil && o.err == nil {
					refused.add(c.Name + "/" + pl.name + ": " + y.err.Error())
				}
			}
		})
	}
	t.Cleanup(func() {
		t.Logf("%s: %d programs on wasm and yaegi (in-process, worker) in %v (summed per placement: %s); refused by name on yaegi: %v",
			dir, len(cases), time.Since(start).Round(time.Millisecond), spent, refused.list())
	})
}

func modeOK(modes []string, isolation string) bool {
	want := sandboxtest.ModeInProcess
	if isolation == sandbox.IsolationProcess {
		want = sandboxtest.ModeIsolated
	}
	for _, m := range modes {
		if m == want {
			return true
		}
	}
	return false
}

// testAnswer is what a backend did with one problem's tests: each test's outcome, or the error.
func testAnswer(sb sandbox.Tester, code, tests, isolation string) answer {
	lim := sandbox.Limits{Isolation: isolation, Timeout: hangBound}
	res, err := sb.Test(context.Background(), sandbox.Source{Code: code, Limits: lim}, tests, sandbox.Input{Limits: lim})
	if err != nil {
		var se *sandbox.Error
		return answer{kind: sandbox.KindOf(err), err: err, compile: errors.As(err, &se) && se.Kind == sandbox.KindCompile}
	}
	var b strings.Builder
	b.WriteString("[")
	for i, r := range res {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "%q", fmt.Sprintf("%s passed=%v", r.Name, r.Passed))
	}
	b.WriteString("]")
	return answer{value: b.String()}
}

// TestHumanEval runs every HumanEval-X Go problem's canonical solution against its example test
// on wasm and on yaegi in both placements: each test must pass or fail alike.
func TestHumanEval(t *testing.T) {
	problems := sandboxtest.LoadHumanEval(t)
	if len(problems) != 164 {
		t.Fatalf("want 164 problems, got %d", len(problems))
	}
	start := time.Now()
	refused, spent := newRefusals(), newSpent()
	for _, p := range problems {
		t.Run(strings.ReplaceAll(p.TaskID, "/", "_"), func(t *testing.T) {
			t.Parallel()
			code := p.Prompt + p.CanonicalSolution
			if fix, ok := sandboxtest.OrderDependent[p.TaskID]; ok {
				code = p.Prompt + fix.Solution // the canonical answer depends on map order
			}
			tests := p.TestSetup + "\n" + p.ExampleTest
			t0 := time.Now()
			o := testAnswer(oracle, code, tests, sandbox.IsolationNone)
			spent.add("wasm", time.Since(t0))
			for _, pl := range placements {
				t0 := time.Now()
				y := testAnswer(interp, code, tests, pl.isolation)
				spent.add(pl.name, time.Since(t0))
				if msg := verdict(o, y); msg != "" {
					t.Errorf("yaegi %s %s", pl.name, msg)
				} else if y.err != nil && o.err == nil {
					refused.add(p.TaskID + "/" + pl.name)
				}
			}
		})
	}
	t.Cleanup(func() {
		t.Logf("HumanEval-X: %d problems on wasm and yaegi (in-process, worker) in %v (summed per placement: %s); refused by name on yaegi: %v",
			len(problems), time.Since(start).Round(time.Millisecond), spent, refused.list())
	})
}
