package guestgen

import (
	"go/parser"
	"go/token"
	"runtime/debug"
	"strings"
	"time"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/gate"
)

// GateSuite gates an artifact and its test file as Test compiles them: the artifact as in
// Compile, the test file under the test rules with the artifact's imports visible, then the
// boundary check (the artifact sees no name only the test file declares). It returns both
// normalized files and the test names.
func GateSuite(artifactCode, testCode string) (code, tests string, names []string, err error) {
	code, af, err := GateCode(artifactCode, false, nil)
	if err != nil {
		return "", "", nil, err
	}
	tests, names, err = gateTests(testCode, FileImports(af))
	if err != nil {
		return "", "", nil, err
	}
	fset := token.NewFileSet()
	af, aerr := parser.ParseFile(fset, "artifact.go", code, parser.SkipObjectResolution|parser.ParseComments)
	tf, terr := parser.ParseFile(fset, "acceptance.go", tests, parser.SkipObjectResolution|parser.ParseComments)
	if aerr != nil || terr != nil { // both parsed in gateCode already
		return "", "", nil, sandbox.Errorf(sandbox.KindInternal, "reparse gated files: %v %v", aerr, terr)
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
	tests, f, err := GateCode(testCode, true, artifactImports)
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

// ParseTestReport reads testing's -test.v report: one result per top-level test with a verdict
// line, its messages being the lines printed while it ran. A test that was running when the module
// stopped fails with stopErr.
func ParseTestReport(report string, stopErr error) []sandbox.TestResult {
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

// TestDepsSource is the testDeps a guest's test main passes to testing.MainStart (what go test's
// generated main passes; its method set follows the toolchain, hence the Go version in every
// module key). It needs io, reflect, regexp and time imported.
const TestDepsSource = `type corpusEntry = struct {
	Parent     string
	Path       string
	Data       []byte
	Values     []any
	Generation int
	IsSeed     bool
}

type deps struct{}

func (deps) ImportPath() string                          { return "forge/artifact" }
func (deps) ModulePath() string                          { return "forge" }
func (deps) MatchString(pat, str string) (bool, error)   { return regexp.MatchString(pat, str) }
func (deps) SetPanicOnExit0(bool)                        {}
func (deps) StartCPUProfile(io.Writer) error             { return nil }
func (deps) StopCPUProfile()                             {}
func (deps) StartTestLog(io.Writer)                      {}
func (deps) StopTestLog() error                          { return nil }
func (deps) WriteProfileTo(string, io.Writer, int) error { return nil }
func (deps) CoordinateFuzzing(time.Duration, int64, time.Duration, int64, int, []corpusEntry, []reflect.Type, string, string) error {
	return nil
}
func (deps) RunFuzzWorker(func(corpusEntry) error) error                { return nil }
func (deps) ReadCorpus(string, []reflect.Type) ([]corpusEntry, error)   { return nil, nil }
func (deps) CheckCorpus([]any, []reflect.Type) error                    { return nil }
func (deps) ResetCoverage()                                             {}
func (deps) SnapshotCoverage()                                          {}
func (deps) InitRuntimeCoverage() (string, func(string, string) (string, error), func() float64) {
	return "", nil, nil
}
`

// TestifyVersion is the testify the forge itself links (acceptance tests use the same one), or the
// one go.mod pins when build info is unavailable.
func TestifyVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/stretchr/testify" {
				if d.Replace != nil {
					return d.Replace.Version
				}
				return d.Version
			}
		}
	}
	return "v1.12.1"
}

// FinishTestResults applies what host saw during a test run to its results: a policy violation
// fails every test, and the run's logs go with the first result.
func FinishTestResults(results []sandbox.TestResult, host *sandbox.Host) []sandbox.TestResult {
	for i := range results {
		if v := host.Violation(); v != nil {
			results[i].Passed = false
			results[i].Message = strings.TrimSpace(results[i].Message + "\n" + v.Error())
		}
	}
	if len(results) > 0 {
		results[0].Logs = host.Logs()
	}
	return results
}

// RunEvery calls f every interval until stop is closed.
func RunEvery(interval time.Duration, stop <-chan struct{}, f func(now time.Time)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			f(now)
		}
	}
}
