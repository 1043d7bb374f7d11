package registry

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/artifactforge/forge/sandbox"
)

// ErrInvalidContract is returned for a role contract that cannot be used.
var ErrInvalidContract = errors.New("invalid contract")

// Contract is a role's contract: what its methods are for and how their code is checked, limited
// and sandboxed. It is what the code generator is given and what contract_fingerprint hashes.
type Contract struct {
	Role          string            `json:"role"`
	Purpose       string            `json:"purpose"`
	Methods       map[string]string `json:"methods,omitempty"`     // method name -> declared Go signature
	Deliverable   json.RawMessage   `json:"deliverable,omitempty"` // JSON Schema of results
	Acceptance    *Acceptance       `json:"acceptance,omitempty"`
	Capabilities  *Capabilities     `json:"capabilities,omitempty"`
	Sandbox       string            `json:"sandbox,omitempty"` // "" (yaegi) | yaegi | wasm
	Limits        *Limits           `json:"limits,omitempty"`
	FailurePolicy *FailurePolicy    `json:"failure_policy,omitempty"`
	// Sample is the sample of real calls kept per artifact (safe regeneration; sample.go).
	Sample *SampleConfig `json:"sample,omitempty"`

	// Docs describe methods for the agents that choose them (MCP tool descriptions, parameter
	// descriptions in the input schema, OpenAI and Anthropic tool specs). They never change what
	// code does: Fingerprint leaves them out, so editing them makes nothing stale.
	Docs map[string]MethodDoc `json:"docs,omitempty"`

	definedBy string // the client defining it (By); PutRole records it as RoleRecord.DefinedBy
	byAgent   bool   // defined by an agent (ByAgent): RoleRecord.AgentDefined
}

// MethodDoc describes one method for an agent choosing among tools.
type MethodDoc struct {
	// Description says what the method does and when to use it, in a sentence or two.
	Description string `json:"description,omitempty"`
	// Params describe the parameters by name (the names of the method's signature).
	Params map[string]string `json:"params,omitempty"`
	// Examples are sample calls shown to the agent (not acceptance examples: nothing runs them).
	Examples []DocExample `json:"examples,omitempty"`
}

// DocExample is one sample call of a method: its args and the value it returns.
type DocExample struct {
	Args   json.RawMessage `json:"args"`
	Result json.RawMessage `json:"result,omitempty"`
}

// By returns c as defined by client who: PutRole records who in the role's record (DefinedBy).
func (c Contract) By(who string) Contract {
	c.definedBy = who
	return c
}

// ByAgent is By for a contract an agent wrote (forge_define_role, POST /v1/roles): its text is a
// caller's, which PutRole records (RoleRecord.AgentDefined) so that prompts keep it as data.
func (c Contract) ByAgent(who string) Contract {
	c.definedBy, c.byAgent = who, true
	return c
}

// Acceptance is what generated code must pass before it may become current.
type Acceptance struct {
	Examples []Example `json:"examples,omitempty"`
	Tests    string    `json:"tests,omitempty"` // Go test source using testing and testify
	// MethodTests are Go test sources per method, for roles whose methods are tested apart.
	MethodTests map[string]string `json:"method_tests,omitempty"`
}

// Example is one acceptance example: calling the method with Args must return Expect, or, when
// ExpectError is set, must return an error of its own whose message contains ExpectError (the
// method's deliberate answer about a bad input, e.g. "unknown unit").
type Example struct {
	Method      string          `json:"method,omitempty"` // empty: applies to a role with one method
	Args        json.RawMessage `json:"args"`
	Expect      json.RawMessage `json:"expect,omitempty"`
	ExpectError string          `json:"expect_error,omitempty"`
}

// Capabilities are what a role's code may use from the host API; everything else is denied.
type Capabilities struct {
	HTTP *HTTPCapability `json:"http,omitempty"`
	Log  bool            `json:"log,omitempty"`
	Now  bool            `json:"now,omitempty"`
	Rand bool            `json:"rand,omitempty"`
	Call bool            `json:"call,omitempty"`
}

// HTTPCapability grants HTTP to the listed hosts only.
type HTTPCapability struct {
	Allow    []string `json:"allow"`
	MaxBytes int64    `json:"max_bytes,omitempty"`
	Timeout  string   `json:"timeout,omitempty"` // Go duration
	// Private lets the listed names resolve to loopback, private and link-local addresses
	// (internal services); without it they must resolve to public ones (see sandbox.HTTPCap).
	Private bool `json:"private,omitempty"`
}

// Limits bound one call of the role's methods. Sizes are written like "256MB" or "1MiB".
type Limits struct {
	Timeout  string `json:"timeout,omitempty"` // Go duration, e.g. "2s"
	Memory   string `json:"memory,omitempty"`
	Output   string `json:"output,omitempty"`
	MaxDepth int    `json:"max_depth,omitempty"`
	// MaxCallDepth is the delegation depth at which this role's code may no longer host.Call
	// (the top-level call is depth 0); 0 means sandbox.DefaultMaxCallDepth (16), at most
	// sandbox.MaxCallDepthCeiling (64).
	MaxCallDepth int    `json:"max_call_depth,omitempty"`
	Isolation    string `json:"isolation,omitempty"` // "" | "process"
	// Instance is "per_call" for a fresh interpreter or instance per call (no call sees package
	// state another left; costs its creation on every call), or "" (pooled) to reuse them.
	Instance string `json:"instance,omitempty"`
}

// FailurePolicy tunes repair for a role.
type FailurePolicy struct {
	MaxRepairsBeforeRegen int    `json:"max_repairs_before_regen,omitempty"`
	OnError               string `json:"on_error,omitempty"` // "return_error" (default)
}

// DecodeContract parses and validates a contract written by a user: unknown fields are refused so
// that a typo ("capabilites") does not silently drop a limit.
func DecodeContract(data []byte) (Contract, error) {
	if err := checkUTF8("the contract", data); err != nil {
		return Contract{}, fmt.Errorf("%w: %v", ErrInvalidContract, err)
	}
	var c Contract
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Contract{}, fmt.Errorf("%w: %s", ErrInvalidContract, contractJSONProblem(data, err).Message)
	}
	if dec.More() {
		return Contract{}, fmt.Errorf("%w: %s", ErrInvalidContract, trailingData)
	}
	if err := c.Validate(); err != nil {
		return Contract{}, err
	}
	return c, nil
}

// Validate checks every field that later stages rely on and says what to fix: the first of
// problems' findings. Stored contracts are read through it, so it holds only what every contract
// ever stored passed; Check adds what role add refuses on top.
func (c *Contract) Validate() error {
	if ps := c.problems(); len(ps) > 0 {
		return ps[0].Err
	}
	return nil
}

// problems is every finding of Validate, in the contract's field order.
func (c *Contract) problems() []Problem {
	var ps []Problem
	if err := c.validate(func(p Problem) { ps = append(ps, p) }); err != nil {
		ps = append(ps, Problem{Message: err.Error(), Err: err})
	}
	return ps
}

// validate passes every finding to add. A check written as `return bad(...)` records its finding
// and stops there; one that returns its own error stops with it (problems records it).
func (c *Contract) validate(add func(Problem)) error {
	badAt := func(field, format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		add(Problem{Field: field, Message: msg, Err: fmt.Errorf("%w: role %q: %s", ErrInvalidContract, c.Role, msg)})
	}
	// bad is badAt with the field read from the message ("limits.timeout: ..." -> limits.timeout).
	bad := func(format string, args ...any) error {
		field, _, _ := strings.Cut(format, " ")
		field = strings.TrimRight(field, ":")
		if strings.Trim(field, "abcdefghijklmnopqrstuvwxyz_.") != "" {
			field = ""
		}
		badAt(field, format, args...)
		return nil
	}
	_ = bad // for checks written `return bad(...)`
	wrapped := func(field string, err error) {
		e := fmt.Errorf("%w: role %q: %w", ErrInvalidContract, c.Role, err)
		add(Problem{Field: field, Message: err.Error(), Err: e})
	}
	if err := ValidateName("role", c.Role); err != nil {
		add(Problem{Field: "role", Message: err.Error(), Err: fmt.Errorf("%w: %w", ErrInvalidContract, err)})
	}
	if strings.TrimSpace(c.Purpose) == "" {
		badAt("purpose", "purpose is empty: say in a sentence what the role's methods are for")
	}
	if err := c.checkUTF8(); err != nil {
		badAt("", "%v", err)
	}
	for _, m := range sortedKeys(c.Methods) {
		sig := c.Methods[m]
		if err := ValidateName("method", m); err != nil {
			wrapped("methods."+m, err)
		}
		if sig != "" {
			if err := checkSignature(sig); err != nil {
				badAt("methods."+m, "method %s: signature %q: %v (write it as a Go declaration, e.g. \"func Upper(s string) string\")", m, sig, err)
			}
		}
	}
	if len(c.Deliverable) > 0 {
		if _, err := CompileDeliverable(c.Deliverable); err != nil {
			badAt("deliverable", "deliverable is not a usable JSON Schema: %v", err)
		}
	}
	if a := c.Acceptance; a != nil {
		for i, ex := range a.Examples {
			field := fmt.Sprintf("acceptance.examples[%d]", i)
			if ex.Method != "" {
				if _, ok := c.Methods[ex.Method]; !ok && len(c.Methods) > 0 {
					badAt(field+".method", "acceptance example %d names method %q, which is not in methods", i+1, ex.Method)
				}
			}
			if !json.Valid(ex.Args) || len(ex.Args) == 0 {
				badAt(field+".args", "acceptance example %d: args must be a JSON object or array", i+1)
			}
			switch {
			case ex.ExpectError != "" && len(ex.Expect) > 0:
				badAt(field, "acceptance example %d: give either expect (a value) or expect_error (a substring of the error the code returns), not both", i+1)
			case ex.ExpectError != "":
				if strings.TrimSpace(ex.ExpectError) == "" {
					badAt(field+".expect_error", "acceptance example %d: expect_error must name part of the error message", i+1)
				}
			case !json.Valid(ex.Expect) || len(ex.Expect) == 0:
				badAt(field+".expect", "acceptance example %d: expect must be JSON (or use expect_error for an input the method must refuse)", i+1)
			}
		}
		for _, m := range sortedKeys(a.MethodTests) {
			if err := ValidateName("method", m); err != nil {
				e := fmt.Errorf("%w: role %q: acceptance.method_tests: %w", ErrInvalidContract, c.Role, err)
				add(Problem{Field: "acceptance.method_tests." + m, Message: err.Error(), Err: e})
			}
			if _, err := parser.ParseFile(token.NewFileSet(), "acceptance_test.go", a.MethodTests[m], parser.SkipObjectResolution); err != nil {
				badAt("acceptance.method_tests."+m, "acceptance tests of %s do not parse as a Go file: %v", m, err)
			}
		}
		if a.Tests != "" {
			if _, err := parser.ParseFile(token.NewFileSet(), "acceptance_test.go", a.Tests, parser.SkipObjectResolution); err != nil {
				badAt("acceptance.tests", "acceptance tests do not parse as a Go file: %v", err)
			}
		}
	}
	if c.Sandbox != "" && !validName(c.Sandbox) {
		// Whether a backend of that name is registered is Check's matter: a stored contract stays
		// readable by a program built without its backend (the call then says which to import).
		badAt("sandbox", "sandbox %q is not a backend name: use one of %s, or leave it out for the safe default", c.Sandbox, sandbox.BackendNames())
	}
	if caps := c.Capabilities; caps != nil && caps.HTTP != nil {
		for _, h := range caps.HTTP.Allow {
			if h == "" || strings.ContainsAny(h, "/ ") {
				badAt("capabilities.http.allow", "capabilities.http.allow has %q: list host names (e.g. api.example.com or localhost:8080), not URLs", h)
			}
		}
		if caps.HTTP.MaxBytes < 0 {
			badAt("capabilities.http.max_bytes", "capabilities.http.max_bytes is negative")
		}
		if caps.HTTP.Timeout != "" {
			if _, err := parsePositiveDuration(caps.HTTP.Timeout); err != nil {
				badAt("capabilities.http.timeout", "capabilities.http.timeout: %v", err)
			}
		}
	}
	if l := c.Limits; l != nil {
		if l.Timeout != "" {
			if _, err := parsePositiveDuration(l.Timeout); err != nil {
				badAt("limits.timeout", "limits.timeout: %v", err)
			}
		}
		for _, f := range []struct{ field, v string }{{"memory", l.Memory}, {"output", l.Output}} {
			if f.v != "" {
				if _, err := ParseSize(f.v); err != nil {
					badAt("limits."+f.field, "limits.%s: %v", f.field, err)
				}
			}
		}
		if l.MaxDepth < 0 {
			badAt("limits.max_depth", "limits.max_depth is negative")
		}
		if l.MaxCallDepth < 0 || l.MaxCallDepth > sandbox.MaxCallDepthCeiling {
			badAt("limits.max_call_depth", "limits.max_call_depth %d is out of range: use 1 to %d, or leave it out for %d", l.MaxCallDepth, sandbox.MaxCallDepthCeiling, sandbox.DefaultMaxCallDepth)
		}
		switch l.Isolation {
		case "", "process":
		default:
			badAt("limits.isolation", "limits.isolation %q is unknown: use \"process\" or leave it out", l.Isolation)
		}
		switch l.Instance {
		case "", "pooled", "per_call":
		default:
			return bad("limits.instance %q is unknown: use \"per_call\" (a fresh instance for every call) or \"pooled\" (the default)", l.Instance)
		}
	}
	if fp := c.FailurePolicy; fp != nil && fp.MaxRepairsBeforeRegen < 0 {
		badAt("failure_policy.max_repairs_before_regen", "failure_policy.max_repairs_before_regen is negative")
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// checkUTF8 refuses text that is not UTF-8: JSON encoding would silently replace such bytes with
// U+FFFD, so the stored contract would differ from the one written.
func (c *Contract) checkUTF8() error {
	check := func(what, s string) error { return checkUTF8(what, []byte(s)) }
	if err := check("purpose", c.Purpose); err != nil {
		return err
	}
	for m, sig := range c.Methods {
		if err := check("method name", m); err != nil {
			return err
		}
		if err := check("signature of "+m, sig); err != nil {
			return err
		}
	}
	if err := checkUTF8("deliverable", c.Deliverable); err != nil {
		return err
	}
	if a := c.Acceptance; a != nil {
		if err := check("acceptance.tests", a.Tests); err != nil {
			return err
		}
		for m, src := range a.MethodTests {
			if err := check("acceptance.method_tests."+m, src); err != nil {
				return err
			}
		}
		for i, ex := range a.Examples {
			if err := checkUTF8(fmt.Sprintf("acceptance example %d args", i+1), ex.Args); err != nil {
				return err
			}
			if err := checkUTF8(fmt.Sprintf("acceptance example %d expect", i+1), ex.Expect); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkUTF8 says where data stops being UTF-8.
func checkUTF8(what string, data []byte) error {
	if utf8.Valid(data) {
		return nil
	}
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n <= 1 {
			return fmt.Errorf("%s is not valid UTF-8 (byte 0x%02x at offset %d); forge refuses it rather than replace bytes: convert it to UTF-8", what, data[i], i)
		}
		i += n
	}
	return nil
}

// CheckUTF8 is checkUTF8 for callers outside the package (command-line arguments).
func CheckUTF8(what string, data []byte) error { return checkUTF8(what, data) }

// CompileDeliverable compiles a deliverable JSON Schema.
func CompileDeliverable(schema json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, err
	}
	comp := jsonschema.NewCompiler()
	if err := comp.AddResource("deliverable.json", doc); err != nil {
		return nil, err
	}
	return comp.Compile("deliverable.json")
}

func checkSignature(sig string) error {
	src := "package p\n" + strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(sig), "{"))
	if !strings.HasPrefix(strings.TrimSpace(sig), "func ") {
		return errors.New("does not start with func")
	}
	_, err := parser.ParseFile(token.NewFileSet(), "sig.go", src, parser.SkipObjectResolution)
	return err
}

func parsePositiveDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (write e.g. 500ms or 2s)", s)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%q must be positive", s)
	}
	return d, nil
}

// ParseSize is sandbox.ParseSize, the module's one size parser (positive, at most
// sandbox.MaxSize); kept here for the callers that read contracts.
func ParseSize(s string) (int64, error) { return sandbox.ParseSize(s) }

// Fingerprint is the sha256 of the canonical JSON of the fields that change behaviour (everything
// but timestamps and Docs), written "sha256:<hex>". Key order and whitespace in the deliverable schema or
// examples do not change it.
func (c *Contract) Fingerprint() string {
	behaviour := *c
	behaviour.Docs = nil   // descriptions for agents change no code
	behaviour.Sample = nil // what is sampled changes no code
	raw, err := json.Marshal(&behaviour)
	if err != nil {
		panic(fmt.Sprintf("registry: marshal contract: %v", err)) // every field is marshalable
	}
	canon, err := CanonicalJSON(raw)
	if err != nil {
		panic(fmt.Sprintf("registry: canonical contract: %v", err))
	}
	sum := sha256.Sum256(canon)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// CanonicalJSON re-encodes JSON with object keys sorted, no insignificant whitespace and numbers
// kept exactly as written.
func CanonicalJSON(data []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	writeCanonical(&buf, v)
	return buf.Bytes(), nil
}

func writeCanonical(buf *bytes.Buffer, v any) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			kb, _ := json.Marshal(k)
			buf.Write(kb)
			buf.WriteByte(':')
			writeCanonical(buf, x[k])
		}
		buf.WriteByte('}')
	case []any:
		buf.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeCanonical(buf, e)
		}
		buf.WriteByte(']')
	default:
		b, _ := json.Marshal(x)
		buf.Write(b)
	}
}
