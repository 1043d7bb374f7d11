package registry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/artifactforge/forge/sandbox"
)

// Problem is one thing wrong with a contract: the field it is in ("limits.memory",
// "methods.wordcount", "acceptance.examples[1].args"; "" for the whole contract) and what to fix.
type Problem struct {
	Field   string `json:"field"`
	Message string `json:"message"`
	// Err is the problem as an error (it wraps ErrInvalidContract).
	Err error `json:"-"`
}

func (p Problem) Error() string { return p.Err.Error() }

// Maxima are the operator's bounds on every contract's limits (forge.Options.Maxima, the
// FORGE_MAX_MEMORY, FORGE_MAX_TIMEOUT and FORGE_MAX_OUTPUT variables). A zero field is its
// default; a contract over a maximum is refused when it is added, and a stored one runs clamped.
type Maxima struct {
	Memory  int64         // bytes; default DefaultMaxMemory
	Timeout time.Duration // default DefaultMaxTimeout
	Output  int64         // bytes; default DefaultMaxOutput
}

// The default maxima.
const (
	DefaultMaxMemory  = 1 << 30
	DefaultMaxTimeout = 60 * time.Second
	DefaultMaxOutput  = 64 << 20
)

// WithDefaults fills every zero (or negative) field with its default.
func (m Maxima) WithDefaults() Maxima {
	if m.Memory <= 0 {
		m.Memory = DefaultMaxMemory
	}
	if m.Timeout <= 0 {
		m.Timeout = DefaultMaxTimeout
	}
	if m.Output <= 0 {
		m.Output = DefaultMaxOutput
	}
	return m
}

// Check is every problem with the contract that `forge role add` refuses, not just the first:
// Validate's findings, then what can be caught before a model is paid — a method whose
// signature declares another function than the method's, acceptance examples whose args do not
// fit the method's signature or whose expected value does not fit the deliverable schema, and
// limits over the operator's maxima. It is the one contract check of every edge (the CLI's
// `forge role check` and `role add`, forge.Forge.AddRole). Nil means the contract may be added.
func (c *Contract) Check(max Maxima) []Problem {
	ps := c.problems()
	bad := func(field, format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		ps = append(ps, Problem{Field: field, Message: msg, Err: fmt.Errorf("%w: role %q: %s", ErrInvalidContract, c.Role, msg)})
	}
	if c.Sandbox != "" && validName(c.Sandbox) {
		if _, ok := sandbox.LookupBackend(c.Sandbox); !ok {
			bad("sandbox", "sandbox %q is unknown: use one of %s, or leave it out for the safe default", c.Sandbox, sandbox.BackendNames())
		}
	}
	sigs := map[string]*sandbox.Signature{}
	for _, m := range sortedKeys(c.Methods) {
		decl := c.Methods[m]
		if decl == "" || checkSignature(decl) != nil || !validName(m) {
			continue // Validate's matter
		}
		sig, err := ParseDecl(decl)
		if err != nil {
			bad("methods."+m, "method %s: signature %q: %v", m, decl, err)
			continue
		}
		sigs[m] = &sig // its parameters still check the examples when only the name is wrong
		if want := sandbox.ExportedName(m); sig.Func != want {
			fix := fmt.Sprintf("declare it as func %s", want)
			if alt := snakeName(sig.Func); alt != "" && alt != m {
				fix += fmt.Sprintf(", or name the method %q", alt)
			}
			bad("methods."+m, "method %s: its signature declares func %s, but the code of method %s is the function %s (the method name in CamelCase); "+
				"no generated code could ever pass: %s", m, sig.Func, m, want, fix)
		}
	}
	if a := c.Acceptance; a != nil {
		var deliverable *jsonschema.Schema
		if len(c.Deliverable) > 0 {
			deliverable, _ = CompileDeliverable(c.Deliverable) // nil when unusable: Validate's matter
		}
		for i, ex := range a.Examples {
			field := fmt.Sprintf("acceptance.examples[%d]", i)
			method := ex.Method
			if method == "" && len(c.Methods) == 1 {
				for m := range c.Methods {
					method = m
				}
			}
			if sig := sigs[method]; sig != nil && json.Valid(ex.Args) && len(ex.Args) > 0 {
				if err := checkArgs(*sig, ex.Args); err != nil {
					bad(field+".args", "acceptance example %d: args %s do not fit %s's signature %s: %v", i+1, oneLine(ex.Args), method, c.Methods[method], err)
				}
			}
			if deliverable != nil && ex.ExpectError == "" && json.Valid(ex.Expect) && len(ex.Expect) > 0 {
				v, err := jsonValue(ex.Expect)
				if err == nil {
					err = deliverable.Validate(v)
				}
				if err != nil {
					bad(field+".expect", "acceptance example %d: expect %s does not fit the deliverable schema: %s", i+1, oneLine(ex.Expect), schemaMsg(err))
				}
			}
		}
	}
	if a := c.Acceptance; a != nil && len(c.Methods) > 0 {
		fns := make([]string, 0, len(c.Methods))
		for _, m := range sortedKeys(c.Methods) {
			fns = append(fns, sandbox.ExportedName(m))
		}
		for i, ex := range a.Examples {
			if ex.Method == "" && len(c.Methods) > 1 {
				bad(fmt.Sprintf("acceptance.examples[%d].method", i), "acceptance example %d names no method, so every method's code would have to pass it: name the method it is for (one of %s)", i+1, strings.Join(sortedKeys(c.Methods), ", "))
			}
		}
		for _, m := range sortedKeys(a.MethodTests) {
			if _, ok := c.Methods[m]; !ok && validName(m) {
				bad("acceptance.method_tests."+m, "acceptance.method_tests has tests for %s, which is not in methods (%s): they would never run", m, strings.Join(sortedKeys(c.Methods), ", "))
			}
		}
		if a.Tests != "" {
			calls := false
			for _, fn := range fns {
				calls = calls || strings.Contains(a.Tests, fn+"(")
			}
			if !calls {
				bad("acceptance.tests", "acceptance.tests call none of the methods' functions (%s), so they would never run: call them by those names", strings.Join(fns, ", "))
			}
		}
	}
	for _, m := range slices.Sorted(maps.Keys(c.Docs)) {
		d, field := c.Docs[m], "docs."+m
		if _, ok := c.Methods[m]; !ok {
			bad(field, "docs describe method %s, which is not in methods (%s): describe the declared methods", m, strings.Join(sortedKeys(c.Methods), ", "))
			continue
		}
		sig := sigs[m]
		if sig == nil {
			continue
		}
		for _, p := range sortedKeys(d.Params) {
			if !slices.ContainsFunc(sig.Params, func(sp sandbox.Param) bool { return sp.Name == p }) {
				names := make([]string, len(sig.Params))
				for i, sp := range sig.Params {
					names[i] = sp.Name
				}
				bad(field+".params."+p, "docs of %s describe parameter %s, which %s does not have (its parameters: %s)", m, p, c.Methods[m], strings.Join(names, ", "))
			}
		}
		for i, ex := range d.Examples {
			if !json.Valid(ex.Args) || len(ex.Args) == 0 {
				bad(fmt.Sprintf("%s.examples[%d].args", field, i), "docs example %d of %s: args must be a JSON object or array", i+1, m)
			} else if err := checkArgs(*sig, ex.Args); err != nil {
				bad(fmt.Sprintf("%s.examples[%d].args", field, i), "docs example %d of %s: args %s do not fit the signature %s: %v", i+1, m, oneLine(ex.Args), c.Methods[m], err)
			}
			if len(ex.Result) > 0 && !json.Valid(ex.Result) {
				bad(fmt.Sprintf("%s.examples[%d].result", field, i), "docs example %d of %s: result must be JSON", i+1, m)
			}
		}
	}
	if l := c.Limits; l != nil {
		max = max.WithDefaults()
		if d, err := parsePositiveDuration(l.Timeout); l.Timeout != "" && err == nil && d > max.Timeout {
			bad("limits.timeout", "limits.timeout %s is over the operator's maximum of %s (FORGE_MAX_TIMEOUT): lower it, or have the operator raise the maximum", l.Timeout, max.Timeout)
		}
		for _, f := range []struct {
			field, v, env string
			max           int64
		}{{"memory", l.Memory, "FORGE_MAX_MEMORY", max.Memory}, {"output", l.Output, "FORGE_MAX_OUTPUT", max.Output}} {
			if n, err := ParseSize(f.v); f.v != "" && err == nil && n > f.max {
				bad("limits."+f.field, "limits.%s %s is over the operator's maximum of %s (%s): lower it, or have the operator raise the maximum", f.field, f.v, sandbox.FormatSize(f.max), f.env)
			}
		}
	}
	return ps
}

// ParseDecl parses a declared method signature ("func Upper(s string) string") as the sandbox
// reads the method's code: its parameters, their JSON Schema and the result's.
func ParseDecl(decl string) (sandbox.Signature, error) {
	return sandbox.ParseSignature(sandbox.Source{Code: "package artifact\n" + strings.TrimSuffix(strings.TrimSpace(decl), "{") + " { panic(0) }"})
}

// CheckContract reads a contract as written by a user and returns it with every problem Check
// finds, plus the JSON's own: unknown fields (all of them, e.g. a capability forge does not
// know) and values of the wrong type. Nothing is written anywhere.
func CheckContract(data []byte, max Maxima) (Contract, []Problem) {
	var c Contract
	top := func(msg string) []Problem {
		return []Problem{{Message: msg, Err: fmt.Errorf("%w: %s", ErrInvalidContract, msg)}}
	}
	if err := checkUTF8("the contract", data); err != nil {
		return c, top(err.Error())
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&c); err != nil {
		p := contractJSONProblem(data, err)
		p.Err = fmt.Errorf("%w: %s", ErrInvalidContract, p.Message)
		return c, []Problem{p}
	}
	if dec.More() {
		return c, top(trailingData)
	}
	var ps []Problem
	unknownFields(data, reflect.TypeOf(c), "", &ps)
	if n := len(ps); n > maxUnknownProblems { // each says the field's name and the names it takes
		ps = append(ps[:maxUnknownProblems], Problem{Message: fmt.Sprintf("and %d more unknown fields", n-maxUnknownProblems)})
	}
	for i := range ps {
		ps[i].Err = fmt.Errorf("%w: role %q: %s", ErrInvalidContract, c.Role, ps[i].Message)
	}
	return c, append(ps, c.Check(max)...)
}

// maxUnknownProblems bounds the unknown fields CheckContract lists one by one.
const maxUnknownProblems = 20

// unknownFields lists the keys of raw that the struct type t does not have, recursively
// (matching keys as encoding/json does, case-insensitively).
func unknownFields(raw json.RawMessage, t reflect.Type, path string, out *[]Problem) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice:
		var list []json.RawMessage
		if t.Elem().Kind() == reflect.Uint8 || json.Unmarshal(raw, &list) != nil {
			return
		}
		for i, e := range list {
			unknownFields(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i), out)
		}
		return
	case reflect.Struct:
	default:
		return
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return
	}
	var names []string
	fields := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		names = append(names, name)
		fields[name] = f.Type
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		var ft reflect.Type
		for _, n := range names {
			if strings.EqualFold(n, k) {
				ft = fields[n]
				break
			}
		}
		if ft == nil {
			k = EchoedName(k)
		}
		p := k
		if path != "" {
			p = path + "." + k
		}
		if ft == nil {
			msg := fmt.Sprintf("unknown field %q in %s: it takes %s", k, path, strings.Join(names, ", "))
			switch path {
			case "":
				msg = fmt.Sprintf("unknown field %q: a contract takes %s", k, strings.Join(names, ", "))
			case "capabilities":
				msg = fmt.Sprintf("unknown capability %q: the capabilities are %s", k, strings.Join(names, ", "))
			}
			*out = append(*out, Problem{Field: p, Message: msg})
			continue
		}
		unknownFields(obj[k], ft, p, out)
	}
}

// checkArgs says whether args fit sig as a call would take them: the parameters by name or
// position (sandbox.OrderArgs), then each value against the parameter schema.
// CheckArgs checks args against sig as a whole: the parameters they name (sandbox.OrderArgs) and
// the signature's parameter schema (the input schema MCP publishes: types, integer ranges, nulls).
// A schema refusal is a *sandbox.Error of kind args. It decodes and compiles, so it is for the cold
// paths (an acceptance example, a call about to pay a model), never the warm call.
func CheckArgs(sig sandbox.Signature, args json.RawMessage) error { return checkArgs(sig, args) }

func checkArgs(sig sandbox.Signature, args json.RawMessage) error {
	list, err := sandbox.OrderArgs(sig, args)
	if err != nil {
		return err
	}
	if len(sig.ParamsSchema) == 0 {
		return nil
	}
	schema, err := CompileDeliverable(sig.ParamsSchema)
	if err != nil {
		return nil // a schema forge derived and cannot read is not the contract's problem
	}
	obj := make(map[string]json.RawMessage, len(list))
	for i, v := range list {
		if i < len(sig.Params) && v != nil {
			obj[sig.Params[i].Name] = v
		}
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	v, err := jsonValue(b)
	if err != nil {
		return err
	}
	if err := schema.Validate(v); err != nil {
		return &sandbox.Error{Kind: sandbox.KindArgs, Message: schemaMsg(err) + " (the method's input schema)", Hint: "give each parameter a value of its type"}
	}
	return nil
}

func jsonValue(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	return v, dec.Decode(&v)
}

// schemaMsg is a schema validation error without the schema's location (a file URL under the
// working directory): "got string, want integer", "at '/s': got number, want string".
func schemaMsg(err error) string {
	msg := oneLine([]byte(err.Error()))
	if rest, ok := strings.CutPrefix(msg, "jsonschema validation failed with '"); ok {
		if _, after, ok := strings.Cut(rest, "' "); ok {
			msg = strings.TrimPrefix(strings.TrimSpace(after), "- ")
		}
	}
	return strings.TrimPrefix(msg, "at '': ")
}

// oneLine is b on one line, at most 200 bytes.
func oneLine(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// snakeName is the method name whose function is fn ("WordCount" -> "word_count"), or "" when
// there is none.
func snakeName(fn string) string {
	var b strings.Builder
	for i, r := range fn {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	n := b.String()
	if !validName(n) || sandbox.ExportedName(n) != fn {
		return ""
	}
	return n
}

// Refusal is the error that refuses a contract with problems ps (nil when there are none): the
// only problem's error, or every problem's message in one error wrapping ErrInvalidContract.
func Refusal(role string, ps []Problem) error {
	switch len(ps) {
	case 0:
		return nil
	case 1:
		return ps[0].Err
	}
	msgs := make([]string, len(ps))
	for i, p := range ps {
		msgs[i] = fmt.Sprintf("(%d) %s", i+1, p.Message)
	}
	return fmt.Errorf("%w: role %q has %d problems: %s", ErrInvalidContract, role, len(ps), strings.Join(msgs, "; "))
}
