package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/artifactforge/forge/registry"
	"github.com/artifactforge/forge/sandbox"
)

// sandboxFlags are the flags forge run and forge test share.
type sandboxFlags struct {
	backend   string
	isolation string
	timeout   time.Duration
	memory    string
	allowHTTP []string
	caps      string
}

func (f *sandboxFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.backend, "sandbox", "", "sandbox backend ("+sandbox.BackendNames()+`); default: the safe default, wasm when a Go toolchain is here, else yaegi with --isolation process ($FORGE_SANDBOX overrides)`)
	cmd.Flags().StringVar(&f.isolation, "isolation", "", `isolation mode: "" (in-process) or "process" (worker processes with rlimits)`)
	cmd.Flags().DurationVar(&f.timeout, "timeout", sandbox.DefaultTimeout, "deadline of each call (each test)")
	cmd.Flags().StringVar(&f.memory, "memory", "256MB", "memory cap (enforced by wasm and --isolation process; not by in-process yaegi)")
	cmd.Flags().StringSliceVar(&f.allowHTTP, "allow-http", nil, "grant host.Get/host.Do to these hosts (comma-separated)")
	cmd.Flags().StringVar(&f.caps, "caps", "", `capabilities as JSON, e.g. '{"log":true,"now":true}'`)
}

// input builds the call input the flags describe.
func (f *sandboxFlags) input() (sandbox.Input, error) {
	var in sandbox.Input
	if f.caps != "" {
		if err := json.Unmarshal([]byte(f.caps), &in.Caps); err != nil {
			return in, usagef("--caps: %v; want e.g. '{\"log\":true}'", err)
		}
	}
	if len(f.allowHTTP) > 0 {
		if in.Caps.HTTP == nil {
			in.Caps.HTTP = &sandbox.HTTPCap{}
		}
		in.Caps.HTTP.Allow = append(in.Caps.HTTP.Allow, f.allowHTTP...)
	}
	mem, err := sandbox.ParseSize(f.memory)
	if err != nil {
		return in, usagef("--memory: %v", err)
	}
	if f.isolation != "" && f.isolation != sandbox.IsolationProcess {
		return in, usagef("--isolation %q: want \"process\" or nothing", f.isolation)
	}
	in.Limits = sandbox.Limits{Timeout: f.timeout, MemoryBytes: mem, Isolation: f.isolation}
	return in, nil
}

// readSource reads a Go file, or stdin for "-".
func readSource(path string, stdin io.Reader) (string, error) {
	var b []byte
	var err error
	if path == "-" {
		b, err = io.ReadAll(stdin)
	} else {
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	return string(b), nil
}

// runResult is forge run's --json output.
type runResult struct {
	OK       bool            `json:"ok"`
	Func     string          `json:"func,omitempty"`
	Value    json.RawMessage `json:"value,omitempty"`
	Logs     []string        `json:"logs,omitempty"`
	Duration string          `json:"duration,omitempty"`
	Error    *sandbox.Error  `json:"error,omitempty"`
}

func init() {
	register(func(a *app) *cobra.Command {
		var f sandboxFlags
		var fn, args string
		cmd := &cobra.Command{
			Use:   "run FILE",
			Short: "Run one Go file's function in the sandbox and print its JSON result",
			Long: `Run compiles FILE (package artifact, one exported function) behind the sandbox's policy gate
and calls the function with --args (a JSON object by parameter name or an array by position).
The result is printed as JSON (exit 0); a failure is printed with its class (exit 1).`,
			Example: `  forge run add.go --args '[1,2]'
  forge run fetch.go --func fetch_title --args '{"url":"https://example.com"}' --allow-http example.com`,
			Args: exactArgs(1),
			RunE: func(cmd *cobra.Command, argv []string) error {
				in, err := f.input()
				if err != nil {
					return err
				}
				in.Args = json.RawMessage(args)
				if args != "" && !json.Valid(in.Args) {
					return usagef("--args is not valid JSON (%s): %s; give a JSON array of the arguments, e.g. '[1, \"a\"]', or an object of them by name", registry.JSONSyntaxWhere(in.Args), oneLine(args, 200))
				}
				code, err := readSource(argv[0], cmd.InOrStdin())
				if err != nil {
					return err
				}
				sb, err := a.newSandbox(&f, &in)
				if err != nil {
					return err
				}
				defer sb.Close()
				sb = withProgress(sb, backendLabel(f.backend), a.steps())
				ctx := cmd.Context()
				if ctx == nil {
					ctx = context.Background()
				}
				prog, err := sb.Compile(ctx, sandbox.Source{Code: code, Func: fn, Limits: in.Limits})
				var out sandbox.Output
				if err == nil {
					out, err = sb.Run(ctx, prog, in)
				}
				return a.printRun(prog, out, err)
			},
		}
		f.register(cmd)
		cmd.Flags().StringVar(&fn, "func", "", "function to call: Go name or snake_case method name (default: the only exported one)")
		cmd.Flags().StringVar(&args, "args", "", "arguments as JSON (object by name or array by position)")
		return cmd
	})
}

func (a *app) printRun(prog sandbox.Program, out sandbox.Output, err error) error {
	res := runResult{OK: err == nil, Value: out.Value, Logs: out.Logs, Duration: out.Duration.String()}
	if prog != nil {
		res.Func = prog.Signature().Func
	}
	if err != nil {
		res.Error = sandbox.AsError(err)
	}
	if a.jsonOut {
		if perr := a.printJSON(res); perr != nil {
			return perr
		}
		if err != nil {
			return codedError{exitFailed, errors.New(res.Error.Error())}
		}
		return nil
	}
	for _, l := range out.Logs {
		fmt.Fprintln(a.stderr, "log:", l)
	}
	if err != nil {
		return codedError{exitFailed, fmt.Errorf("%w%s", err, nextStep(res.Error))}
	}
	fmt.Fprintln(a.stdout, string(out.Value))
	return nil
}

// nextStep says what to do about a classified failure.
func nextStep(e *sandbox.Error) string {
	switch e.Kind {
	case sandbox.KindArgs:
		return "; fix --args to match the function's parameters"
	case sandbox.KindDeadline:
		return "; raise --timeout if the work is legitimately long"
	case sandbox.KindMemory:
		return "; raise --memory if the work legitimately needs it"
	case sandbox.KindPolicy:
		if strings.Contains(e.Message, "http") {
			return "; grant hosts with --allow-http HOST"
		}
	}
	return ""
}
