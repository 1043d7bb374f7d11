// Package sandboxtest runs the sandbox corpus (sandbox/testdata) against any backend, so every
// backend is held to the same programs and expectations. Adding a case is adding a file.
package sandboxtest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/artifactforge/forge/internal/jsonval"
	"github.com/artifactforge/forge/sandbox"
)

// Case is one corpus program with the expectations from its header comments:
//
//	// args: [1, 2]            JSON args (array by position or object by name)
//	// want: 3                 expected JSON value (compared as JSON, not text)
//	// kind: policy            expected error kind; "a|b" accepts either
//	// contains: os.Exit       the error message must contain this
//	// func: Add               function to call (default: the only exported one)
//	// caps: {"log": true}     capabilities (JSON, as in a role contract)
//	// timeout: 300ms          Limits.Timeout (default 1s)
//	// memory: 64MB            Limits.MemoryBytes
//	// output: 1024            Limits.OutputBytes
//	// isolation: process      Limits.Isolation: the case runs only isolated (see CorpusOptions.Modes)
//	// modes: isolated         the modes the case runs in when the runner runs several:
//	//                         "isolated", "inprocess" (behaviour differs) or both (default)
//	// backends: yaegi         run only on these backends (see Named)
//	// stage: compile          the error must come from Compile (default: either)
type Case struct {
	Name      string
	Code      string
	Args      json.RawMessage
	Want      json.RawMessage
	Kinds     []sandbox.Kind
	Contains  string
	Func      string
	Caps      sandbox.Capabilities
	Limits    sandbox.Limits
	Backends  []string
	Modes     []string
	Stage     string
	HasWant   bool
	HasArgs   bool
	headerErr error
}

// Named is implemented by backends that want backend-specific corpus cases filtered by name.
type Named interface{ Name() string }

// LoadCorpus reads every *.go file in dir as a Case, and every *.go.txt file: programs that are
// deliberately not valid Go files (a syntax error, no package clause) keep gofmt and vet quiet.
func LoadCorpus(dir string) ([]Case, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	txt, err := filepath.Glob(filepath.Join(dir, "*.go.txt"))
	if err != nil {
		return nil, err
	}
	files = append(files, txt...)
	sort.Strings(files)
	cases := make([]Case, 0, len(files))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		cases = append(cases, ParseCase(strings.TrimSuffix(filepath.Base(f), ".txt"), string(b)))
	}
	return cases, nil
}

// ParseCase reads a case's header comments (the leading "// key: value" lines).
func ParseCase(name, code string) Case {
	c := Case{Name: strings.TrimSuffix(name, ".go"), Code: code, Limits: sandbox.Limits{Timeout: time.Second}}
	sc := bufio.NewScanner(strings.NewReader(code))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "//") {
			break
		}
		key, val, ok := strings.Cut(strings.TrimSpace(strings.TrimPrefix(line, "//")), ":")
		if !ok {
			continue
		}
		val = strings.TrimSpace(val)
		var err error
		switch strings.TrimSpace(key) {
		case "args":
			c.Args, c.HasArgs = json.RawMessage(val), true
		case "want":
			c.Want, c.HasWant = json.RawMessage(val), true
		case "kind":
			for _, k := range strings.Split(val, "|") {
				c.Kinds = append(c.Kinds, sandbox.Kind(strings.TrimSpace(k)))
			}
		case "contains":
			c.Contains = val
		case "func":
			c.Func = val
		case "caps":
			err = json.Unmarshal([]byte(val), &c.Caps)
		case "timeout":
			c.Limits.Timeout, err = time.ParseDuration(val)
		case "memory":
			c.Limits.MemoryBytes, err = sandbox.ParseSize(val)
		case "output":
			_, err = fmt.Sscan(val, &c.Limits.OutputBytes)
		case "isolation":
			c.Limits.Isolation = val
		case "backends":
			c.Backends = strings.Fields(strings.ReplaceAll(val, ",", " "))
		case "modes":
			c.Modes = strings.Fields(strings.ReplaceAll(val, ",", " "))
			for _, m := range c.Modes {
				if m != ModeInProcess && m != ModeIsolated {
					err = fmt.Errorf("mode %q: want %s or %s", m, ModeInProcess, ModeIsolated)
				}
			}
		case "stage":
			c.Stage = val
		}
		if err != nil && c.headerErr == nil {
			c.headerErr = fmt.Errorf("header %q: %w", line, err)
		}
	}
	if c.HasWant && !json.Valid(c.Want) {
		c.headerErr = fmt.Errorf("want %q is not JSON", c.Want)
	}
	return c
}

// Result is what one case did, for reports.
type Result struct {
	Case    string
	Elapsed time.Duration // Run's wall time (Compile's when the case stops there)
	Overrun time.Duration // Elapsed past the case's timeout, if any
	Err     error
}

// RunCorpus runs every case in dir against a sandbox from newSandbox (one per case, closed after)
// and checks its expectation. Every Run must return within its deadline + 1s (the target is
// +100ms; the real figures are logged). It returns the results for further reporting.
func RunCorpus(t *testing.T, dir string, newSandbox func(t *testing.T) sandbox.Sandbox) []Result {
	t.Helper()
	return RunCorpusWith(t, dir, newSandbox, CorpusOptions{})
}

// Corpus modes: a case runs in-process (Limits.Isolation "") or isolated ("process").
const (
	ModeInProcess = "inprocess"
	ModeIsolated  = "isolated"
)

// CorpusOptions adjust RunCorpusWith.
type CorpusOptions struct {
	// Skip returns a reason to skip a case ("" runs it), e.g. a backend's known upstream bug.
	// The case's Limits.Isolation says which mode it is about to run in.
	Skip func(Case) string
	// Modes runs every case in each of these modes (ModeInProcess, ModeIsolated) as subtests
	// named after the mode, except that a case with "isolation: process" runs only isolated and
	// a case with a "modes:" header only in its modes. Empty: each case runs once, as its
	// header says.
	Modes []string
}

// modesOf returns the modes c runs in under opts ("" for the single run as the header says).
func modesOf(c Case, opts CorpusOptions) []string {
	if len(opts.Modes) == 0 {
		return []string{""}
	}
	var out []string
	for _, m := range opts.Modes {
		switch {
		case c.Limits.Isolation == sandbox.IsolationProcess && m != ModeIsolated:
		case len(c.Modes) > 0 && !contains(c.Modes, m):
		default:
			out = append(out, m)
		}
	}
	return out
}

// RunCorpusWith is RunCorpus with options.
func RunCorpusWith(t *testing.T, dir string, newSandbox func(t *testing.T) sandbox.Sandbox, opts CorpusOptions) []Result {
	t.Helper()
	cases, err := LoadCorpus(dir)
	if err != nil {
		t.Fatalf("load corpus %s: %v", dir, err)
	}
	if len(cases) == 0 {
		t.Fatalf("corpus %s is empty", dir)
	}
	var results []Result
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			if c.headerErr != nil {
				t.Fatalf("%s: %v", c.Name, c.headerErr)
			}
			modes := modesOf(c, opts)
			if len(modes) == 0 {
				t.Skipf("only in modes %v", c.Modes)
			}
			for _, mode := range modes {
				c := c
				switch mode {
				case ModeInProcess:
					c.Limits.Isolation = sandbox.IsolationNone
				case ModeIsolated:
					c.Limits.Isolation = sandbox.IsolationProcess
				}
				one := func(t *testing.T) {
					if opts.Skip != nil {
						if why := opts.Skip(c); why != "" {
							t.Skip(why)
						}
					}
					sb := newSandbox(t)
					defer sb.Close()
					if len(c.Backends) > 0 {
						n, ok := sb.(Named)
						if !ok || !contains(c.Backends, n.Name()) {
							t.Skipf("only for backends %v", c.Backends)
						}
					}
					r := runCase(t, sb, c)
					if mode != "" {
						r.Case += "/" + mode
					}
					results = append(results, r)
				}
				if mode == "" {
					one(t)
				} else {
					t.Run(mode, one)
				}
			}
		})
	}
	var worst Result
	for _, r := range results {
		if r.Overrun > worst.Overrun {
			worst = r
		}
	}
	t.Logf("corpus %s: %d cases, worst overrun past deadline %v (%s)", dir, len(results), worst.Overrun, worst.Case)
	return results
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func runCase(t *testing.T, sb sandbox.Sandbox, c Case) Result {
	t.Helper()
	ctx := context.Background()
	res := Result{Case: c.Name}
	start := time.Now()
	prog, err := sb.Compile(ctx, sandbox.Source{Code: c.Code, Func: c.Func, Limits: c.Limits})
	if err != nil {
		res.Elapsed, res.Err = time.Since(start), err
		checkError(t, c, err, "compile")
		return res
	}
	if c.Stage == "compile" {
		t.Fatalf("want a compile-stage %v error, Compile succeeded", c.Kinds)
	}
	in := sandbox.Input{Args: c.Args, Caps: c.Caps, Limits: c.Limits}
	start = time.Now()
	out, err := sb.Run(ctx, prog, in)
	res.Elapsed, res.Err = time.Since(start), err
	deadline := c.Limits.WithDefaults().Timeout
	if res.Elapsed > deadline {
		res.Overrun = res.Elapsed - deadline
	}
	t.Logf("run: %v (deadline %v, overrun %v)", res.Elapsed.Round(time.Microsecond), deadline, res.Overrun.Round(time.Microsecond))
	if res.Elapsed > deadline+time.Second {
		t.Errorf("run took %v, past deadline %v + 1s", res.Elapsed, deadline)
	}
	if err != nil {
		checkError(t, c, err, "run")
		return res
	}
	if len(c.Kinds) > 0 {
		t.Fatalf("want a %v error, got value %s", c.Kinds, out.Value)
	}
	if c.HasWant && !JSONEqual(out.Value, c.Want) {
		t.Fatalf("value = %s, want %s", out.Value, c.Want)
	}
	if !c.HasWant {
		t.Fatalf("case has neither want nor kind (value %s)", out.Value)
	}
	return res
}

func checkError(t *testing.T, c Case, err error, stage string) {
	t.Helper()
	if len(c.Kinds) == 0 {
		t.Fatalf("%s: unexpected error: %v", stage, err)
	}
	kind := sandbox.KindOf(err)
	ok := false
	for _, k := range c.Kinds {
		ok = ok || k == kind
	}
	if !ok {
		t.Fatalf("%s: error kind %s, want %v: %v", stage, kind, c.Kinds, err)
	}
	if c.Contains != "" && !strings.Contains(err.Error(), c.Contains) {
		t.Fatalf("%s: error %q does not contain %q", stage, err, c.Contains)
	}
	t.Logf("%s: %v", stage, err)
}

// JSONEqual compares two JSON documents by value (jsonval.Equal).
func JSONEqual(a, b json.RawMessage) bool { return jsonval.Equal(a, b) }

// BuildCacheDir is the build cache the tests of every package share, so that each wasm module is
// built and compiled once across packages and runs: $FORGE_WASM_TEST_CACHE, else
// os.UserCacheDir()/forge-test.
func BuildCacheDir() string {
	if dir := os.Getenv("FORGE_WASM_TEST_CACHE"); dir != "" {
		return dir
	}
	d, err := os.UserCacheDir()
	if err != nil {
		d = os.TempDir()
	}
	return filepath.Join(d, "forge-test")
}
