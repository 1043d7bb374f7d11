package sandboxtest

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"testing"
	"time"

	"github.com/artifactforge/forge/sandbox"
)

// FuzzOptions bound one fuzzed program.
type FuzzOptions struct {
	// Limits of the call (the timeout defaults to 1s, the memory cap to 64 MB).
	Limits sandbox.Limits
	// CompileBound is how long Compile may take, the gate's stated bound (default 30s).
	CompileBound time.Duration
	// Slack is how long past its deadline a call may end (default 100ms, plus the compile bound
	// for backends that compile on first run).
	Slack time.Duration
}

// FuzzSeeds adds every corpus program under dirs (valid and hostile) as a seed when fuzzing
// (-test.fuzz): the fuzzer starts from code that exercises every error kind. A plain `go test`
// runs seeds as tests, and the corpus runners run these programs already, so it gets the first
// program of each directory only.
func FuzzSeeds(f *testing.F, dirs ...string) {
	fuzzing := false
	if fl := flag.Lookup("test.fuzz"); fl != nil && fl.Value.String() != "" {
		fuzzing = true
	}
	for _, dir := range dirs {
		cases, err := LoadCorpus(dir)
		if err != nil {
			f.Fatal(err)
		}
		for i, c := range cases {
			if i > 0 && !fuzzing {
				break
			}
			f.Add(c.Code, string(c.Args))
		}
	}
}

// FuzzProgram is the body of a fuzz target: arbitrary source and args go through parse, policy,
// compile and run, and the host must survive and answer within its bounds: Compile within
// CompileBound, Run within the deadline plus Slack, every failure a *sandbox.Error with a kind,
// every value valid JSON. A crash of the test process is the failure the fuzzer looks for.
func FuzzProgram(t *testing.T, sb sandbox.Sandbox, code, args string, opts FuzzOptions) {
	lim := opts.Limits
	if lim.Timeout <= 0 {
		lim.Timeout = time.Second
	}
	if lim.MemoryBytes <= 0 {
		lim.MemoryBytes = 64 << 20
	}
	if opts.CompileBound <= 0 {
		opts.CompileBound = 30 * time.Second
	}
	if opts.Slack <= 0 {
		opts.Slack = 100 * time.Millisecond
	}
	ctx := context.Background()
	start := time.Now()
	// The limits go to Compile too: an isolated program is compiled in its worker, not here.
	prog, err := sb.Compile(ctx, sandbox.Source{Code: code, Limits: lim})
	if took := time.Since(start); took > opts.CompileBound {
		t.Fatalf("Compile took %v, over its bound %v", took, opts.CompileBound)
	}
	if err != nil {
		checkKind(t, "Compile", err)
		return
	}
	in := sandbox.Input{Limits: lim}
	if json.Valid([]byte(args)) {
		in.Args = json.RawMessage(args)
	}
	start = time.Now()
	out, err := sb.Run(ctx, prog, in)
	if took := time.Since(start); took > lim.Timeout+opts.Slack {
		t.Fatalf("Run took %v, over its deadline %v + %v", took, lim.Timeout, opts.Slack)
	}
	if err != nil {
		checkKind(t, "Run", err)
		return
	}
	if !json.Valid(out.Value) {
		t.Fatalf("Run returned a value that is not JSON: %q", out.Value)
	}
}

func checkKind(t *testing.T, stage string, err error) {
	t.Helper()
	var se *sandbox.Error
	if !errors.As(err, &se) {
		t.Fatalf("%s: error %T is not a *sandbox.Error: %v", stage, err, err)
	}
	if se.Kind == "" {
		t.Fatalf("%s: error without a kind: %v", stage, err)
	}
}
