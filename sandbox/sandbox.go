package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
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

// Sizer is implemented by programs that can tell how much memory they hold now (compiled code,
// idle and busy interpreters or instances), so that the forge can bound its live set by memory
// as well as by count. The figure is an estimate of resident memory, read often: it must be cheap
// (an atomic load) and safe to call while the program runs.
type Sizer interface {
	LiveBytes() int64
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
	// Client names the caller the program serves (see forge.WithClient). Programs compiled for
	// different clients never share an interpreter, an instance or a worker process, so that
	// package state one client's calls leave behind never reaches another's. Empty is a client
	// of its own (the one of callers that name none).
	Client string `json:"-"`
}

// Checksum is the sha256 (hex) of the code, the key artifacts and compiled-module caches use.
func (s Source) Checksum() string {
	sum := sha256.Sum256([]byte(s.Code))
	return hex.EncodeToString(sum[:])
}

// Program is a compiled, policy-checked Source. Backends return their own concrete type and accept
// only their own programs in Run.
//
// A Program has a lifetime: Close releases what it holds (interpreters, instances, compiled code)
// and every Compile result must be closed once. The caller guarantees that no Run of the program is
// in flight when it calls Close and that none follows; a Run after Close fails with KindInternal.
// Close is idempotent.
type Program interface {
	Signature() Signature
	Checksum() string
	Source() Source
	Close() error
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
	// ResultSchema is a JSON Schema of the value result as encoding/json writes it (none when
	// the method returns no value).
	ResultSchema json.RawMessage `json:"result_schema,omitempty"`
	// check is what ParamsSchema asks of args beyond decoding them (argcheck.go); AppendArgs
	// applies it. A Signature not made by ParseSignature has none.
	check *argCheck
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
	// Replay marks the run of an input another call already made (forge replays a sampled
	// input on new code, or a call's own args on other code): what the code reads may go out
	// again, what it sends may not. Host HTTP then sends only GET and HEAD; any other method
	// fails the run as KindNotReplayable, whatever the code does with the error.
	Replay bool
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
	MaxDepth    int           `json:"max_depth,omitempty"` // interpreted call depth
	// MaxCallDepth caps delegation: a call at this depth (the top-level call is depth 0) may not
	// make another host Call. Bounds both runaway delegation and the interpreters or instances a
	// delegation chain holds (see RATIONALE, delegation).
	MaxCallDepth int    `json:"max_call_depth,omitempty"`
	Isolation    string `json:"isolation,omitempty"`
	// Instance says whether calls share pooled interpreters or instances (InstancePooled, the
	// default) or each runs in a fresh one that is discarded afterwards (InstancePerCall).
	Instance string `json:"instance,omitempty"`
}

// Instance modes (Limits.Instance).
const (
	// InstancePooled reuses a program's interpreters or instances across calls: package-level
	// variables keep what earlier calls stored in them (see RATIONALE, "Callers share package
	// state").
	InstancePooled = ""
	// InstancePerCall runs every call in a fresh interpreter or instance, discarded when the call
	// returns: no call sees what another stored in package state. It costs the creation of one
	// (the package initializers included) per call.
	InstancePerCall = "per_call"
)

// Default limits: safe for a persisted artifact called thousands of times a second.
const (
	DefaultTimeout      = 2 * time.Second
	DefaultMemoryBytes  = 256 << 20
	DefaultOutputBytes  = 1 << 20
	DefaultMaxDepth     = 10000
	DefaultMaxCallDepth = 16
	// MaxCallDepthCeiling is the highest MaxCallDepth a contract may set: each level of a chain
	// holds an interpreter or instance of its own.
	MaxCallDepthCeiling = 64
	DefaultHTTPBytes    = 4 << 20
	DefaultHTTPTimeout  = 10 * time.Second
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
	if l.MaxCallDepth <= 0 {
		l.MaxCallDepth = DefaultMaxCallDepth
	}
	return l
}

type callDepthKey struct{}

// WithCallDepth records how many host Call hops led to ctx; the forge passes the ctx its CallFunc
// received on to the nested Run so the depth cap holds across artifacts. Backends read it too: a
// Run at depth > 0 is re-entrant (an ancestor in the chain may hold the pooled interpreters or
// instances), so it never waits for the pool.
func WithCallDepth(ctx context.Context, depth int) context.Context {
	return context.WithValue(ctx, callDepthKey{}, depth)
}

// CallDepth returns the delegation depth recorded in ctx (0 at the top).
func CallDepth(ctx context.Context) int {
	d, _ := ctx.Value(callDepthKey{}).(int)
	return d
}

// Caller names the calls that led to a Run, so that a refused delegation can name its chain.
// The forge puts one in the context of every Run whose role may delegate.
type Caller interface {
	// CallChain is "role.method" of every call from the top-level one to the running one.
	CallChain() []string
}

type callerKey struct{}

// WithCaller records the call a Run belongs to (see Caller).
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerOf returns the Caller recorded in ctx, or nil.
func CallerOf(ctx context.Context) Caller {
	c, _ := ctx.Value(callerKey{}).(Caller)
	return c
}

// FormatChain renders a delegation chain as "a.p → a.p → b.q": the whole chain up to 24 calls,
// else the first and last 10 around the number left out.
func FormatChain(chain []string) string {
	if len(chain) > 24 {
		out := append([]string{}, chain[:10]...)
		out = append(out, fmt.Sprintf("… %d more …", len(chain)-20))
		chain = append(out, chain[len(chain)-10:]...)
	}
	return strings.Join(chain, " → ")
}

// CallDepthError is the refusal of a host Call that would go past Limits.MaxCallDepth: chain is
// the calls that led to it (nil if unknown), role.method the refused one.
func CallDepthError(chain []string, role, method string, depth, max int) *Error {
	path := role + "." + method
	if len(chain) > 0 {
		path = FormatChain(append(append([]string{}, chain...), path))
	}
	return &Error{Kind: KindCallDepth,
		Message: fmt.Sprintf("delegation depth cap exceeded: %s would be call %d deep, the cap is %d", path, depth, max),
		Hint: "the delegation never ends: give the recursion a base case that returns without host.Call, or make it a loop; " +
			"a chain that must go deeper needs limits.max_call_depth in the calling role's contract (at most " + strconv.Itoa(MaxCallDepthCeiling) + ")"}
}
