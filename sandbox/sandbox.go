package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"
)

// Sandbox runs generated Go behind a policy gate. Backends (sandbox/yaegi, sandbox/wasm) implement it
// so that the forge's call path does not care where the code runs.
type Sandbox interface {
	// Compile checks src against the policy and compiles it once; the Program is reused by every Run.
	Compile(ctx context.Context, src Source) (Program, error)
	// Run calls the program's function with in.Args under in.Limits and in.Caps.
	Run(ctx context.Context, p Program, in Input) (Output, error)
	// Close releases pooled interpreters, instances and worker processes.
	Close() error
}

// Tester runs Go acceptance tests (testing + testify assert/require) against an artifact inside the
// sandbox, so verification exercises the same interpreter or module that serves calls.
type Tester interface {
	// Test compiles src together with testCode (same package) and runs every TestXxx function,
	// each under in.Limits.Timeout. in.Args is ignored.
	Test(ctx context.Context, src Source, testCode string, in Input) ([]TestResult, error)
}

// TestResult is one top-level test function's outcome.
type TestResult struct {
	Name     string        `json:"name"`
	Passed   bool          `json:"passed"`
	Message  string        `json:"message,omitempty"` // failure messages, one per line
	Logs     []string      `json:"logs,omitempty"`
	Duration time.Duration `json:"duration"`
}

// Source is one generated Go file and the function to call in it.
type Source struct {
	// Code is one Go file in package artifact (package main, or no package clause, is normalized).
	Code string `json:"code"`
	// Func is the exported function name or a snake_case method name (has_close_elements ->
	// HasCloseElements); empty selects the file's only exported function.
	Func string `json:"func,omitempty"`
	// Limits are the limits the program will run under, when the caller knows them at Compile
	// time: with Isolation "process", yaegi compiles the program in a worker process under them
	// (memory cap; Timeout bounds its initializers) instead of in the caller's process.
	Limits Limits `json:"-"`
}

// Checksum is the sha256 (hex) of the code, the key artifacts and compiled-module caches use.
func (s Source) Checksum() string {
	sum := sha256.Sum256([]byte(s.Code))
	return hex.EncodeToString(sum[:])
}

// Program is a compiled, policy-checked Source. Backends return their own concrete type and accept
// only their own programs in Run.
type Program interface {
	Signature() Signature
	Checksum() string
	Source() Source
}

// ResultShape says how a function's results map onto a JSON value.
type ResultShape string

// Result shapes accepted for an artifact's function.
const (
	ResultNone       ResultShape = "none"        // func F(...)
	ResultValue      ResultShape = "value"       // func F(...) T
	ResultValueError ResultShape = "value_error" // func F(...) (T, error)
	ResultError      ResultShape = "error"       // func F(...) error
)

// Param is one parameter of the artifact's function, with its Go type as written in the source.
type Param struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// Signature is what the forge knows about an artifact's function without running it: derived from
// go/ast so that it is identical for every backend.
type Signature struct {
	Func     string      `json:"func"`
	Params   []Param     `json:"params"`
	Variadic bool        `json:"variadic,omitempty"`
	Result   string      `json:"result,omitempty"` // Go type of the value result, if any
	Shape    ResultShape `json:"shape"`
	// ParamsSchema is a JSON Schema (draft 2020-12) of the args object, by parameter name.
	ParamsSchema json.RawMessage `json:"params_schema"`
}

// CallFunc is the forge's delegation callback behind host Call: it runs role.method with args and
// returns its JSON value. ctx carries the delegation depth (see WithCallDepth).
type CallFunc func(ctx context.Context, role, method string, args json.RawMessage) (json.RawMessage, error)

// Input is one call's arguments and what the call is allowed to do.
type Input struct {
	// Args is a JSON object by parameter name or a JSON array by position; empty means no args.
	Args   json.RawMessage
	Caps   Capabilities
	Limits Limits
	Call   CallFunc
}

// Output is a successful call's JSON value and what it did on the way.
type Output struct {
	Value        json.RawMessage `json:"value"`
	Logs         []string        `json:"logs,omitempty"`
	Duration     time.Duration   `json:"duration"`
	HostCalls    int             `json:"host_calls,omitempty"`
	UpstreamRead bool            `json:"upstream_read,omitempty"`
}

// Capabilities are the host functions a role's code is granted; everything else is denied.
type Capabilities struct {
	HTTP *HTTPCap `json:"http,omitempty"`
	Log  bool     `json:"log,omitempty"`
	Now  bool     `json:"now,omitempty"`
	Rand bool     `json:"rand,omitempty"`
	Call bool     `json:"call,omitempty"`
}

// HTTPCap grants HTTP to a fixed set of hosts with caps on response size and time.
type HTTPCap struct {
	// Allow lists host names ("api.example.com", "*.example.com" for subdomains, "host:port").
	Allow    []string      `json:"allow"`
	MaxBytes int64         `json:"max_bytes,omitempty"`
	Timeout  time.Duration `json:"timeout,omitempty"`
	// Private lets the names on the list resolve to loopback, private and link-local addresses
	// (internal services). Without it a listed name must resolve to a public address, so that DNS
	// cannot lead guest code into the host's network; IP literals and localhost on the list are
	// allowed either way, since they name the address themselves.
	Private bool `json:"private,omitempty"`
}

// httpCapJSON is HTTPCap on the wire: the timeout as a Go duration string ("5s").
type httpCapJSON struct {
	Allow    []string `json:"allow"`
	MaxBytes int64    `json:"max_bytes,omitempty"`
	Timeout  string   `json:"timeout,omitempty"`
	Private  bool     `json:"private,omitempty"`
}

// MarshalJSON writes Timeout as a Go duration string so contracts stay readable.
func (c HTTPCap) MarshalJSON() ([]byte, error) {
	w := httpCapJSON{Allow: c.Allow, MaxBytes: c.MaxBytes, Private: c.Private}
	if c.Timeout != 0 {
		w.Timeout = c.Timeout.String()
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads Timeout as a Go duration string.
func (c *HTTPCap) UnmarshalJSON(b []byte) error {
	var w httpCapJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("sandbox: http capability: %w", err)
	}
	*c = HTTPCap{Allow: w.Allow, MaxBytes: w.MaxBytes, Private: w.Private}
	if w.Timeout != "" {
		d, err := time.ParseDuration(w.Timeout)
		if err != nil {
			return fmt.Errorf("sandbox: http capability timeout %q: %w", w.Timeout, err)
		}
		c.Timeout = d
	}
	return nil
}

// Isolation modes.
const (
	IsolationNone    = ""        // in-process, fastest
	IsolationProcess = "process" // worker processes with rlimits: a crash or memory bomb kills only a worker
)

// Limits bound one call. The zero value means "defaults" (see WithDefaults).
type Limits struct {
	Timeout     time.Duration `json:"timeout,omitempty"`
	MemoryBytes int64         `json:"memory_bytes,omitempty"`
	OutputBytes int           `json:"output_bytes,omitempty"`
	MaxDepth    int           `json:"max_depth,omitempty"`     // interpreted call depth
	MaxCallHops int           `json:"max_call_hops,omitempty"` // host Call delegation depth
	Isolation   string        `json:"isolation,omitempty"`
}

// Default limits: safe for a persisted artifact called thousands of times a second.
const (
	DefaultTimeout     = 2 * time.Second
	DefaultMemoryBytes = 256 << 20
	DefaultOutputBytes = 1 << 20
	DefaultMaxDepth    = 10000
	DefaultMaxCallHops = 8
	DefaultHTTPBytes   = 4 << 20
	DefaultHTTPTimeout = 10 * time.Second
)

// WithDefaults fills every zero field with its safe default.
func (l Limits) WithDefaults() Limits {
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	if l.MemoryBytes <= 0 {
		l.MemoryBytes = DefaultMemoryBytes
	}
	if l.OutputBytes <= 0 {
		l.OutputBytes = DefaultOutputBytes
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	if l.MaxCallHops <= 0 {
		l.MaxCallHops = DefaultMaxCallHops
	}
	return l
}

type callDepthKey struct{}

// WithCallDepth records how many host Call hops led to ctx; the forge passes the ctx its CallFunc
// received on to the nested Run so the hop limit holds across artifacts.
func WithCallDepth(ctx context.Context, depth int) context.Context {
	return context.WithValue(ctx, callDepthKey{}, depth)
}

// CallDepth returns the delegation depth recorded in ctx (0 at the top).
func CallDepth(ctx context.Context) int {
	d, _ := ctx.Value(callDepthKey{}).(int)
	return d
}
